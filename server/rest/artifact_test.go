package rest_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestArtifactFlow walks the staging flow end to end through
// plain net/http: mint, PUT exactly the signed headers, register, presign,
// download; then looks in the bucket.
func TestArtifactFlow(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})

	cases := []struct {
		name          string
		body          []byte
		signedHeaders string
		mime          string
	}{
		{"OKText", []byte("hello, cairn\nsecond line\n"),
			"content-length;host;x-amz-checksum-sha256", "text/plain; charset=utf-8"},
		{"OKPDF", []byte("%PDF-1.4\n%âãÏÓ\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n%%EOF\n"),
			"content-length;host;x-amz-checksum-sha256", "application/pdf"},
		// The SDK leaves a zero content-length out of the signature; the
		// signed checksum of the empty body binds the length instead.
		{"OKEmpty", []byte{}, "host;x-amz-checksum-sha256", "text/plain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := h.newWorkspace(t)

			before := time.Now()
			st := h.mint(t, ws, c.body)
			after := time.Now()
			require.WithinRange(t, st.ExpiresAt, before.Add(359*time.Second), after.Add(361*time.Second),
				"expires_at is mint time + putUrlTTLSecs")
			u, err := url.Parse(st.PutURL)
			require.NoError(t, err)
			require.Equal(t, "http", u.Scheme)
			require.Equal(t, h.gw.Endpoint, u.Host)
			require.Equal(t, "/"+h.bucket+"/"+st.Key, u.Path)
			require.Equal(t, "360", u.Query().Get("X-Amz-Expires"))
			require.Equal(t, "AWS4-HMAC-SHA256", u.Query().Get("X-Amz-Algorithm"))
			require.Equal(t, c.signedHeaders, u.Query().Get("X-Amz-SignedHeaders"))

			status, resp := put(t, st.PutURL, c.body, sha256B64(c.body))
			require.Equal(t, http.StatusOK, status, resp)
			_, size, found := h.head(t, st.Key)
			require.True(t, found, "the PUT stored the staging object")
			require.Equal(t, int64(len(c.body)), size)

			name := "doc-" + strings.ToLower(c.name)
			a := h.artifactOf(t, h.register(t, ws, st.Key, name))
			require.Equal(t, ws, a.WorkspaceID)
			require.Equal(t, name, a.Name)
			require.Equal(t, "RECORDED", a.State)
			require.Equal(t, int64(len(c.body)), a.Size)
			require.Equal(t, c.mime, a.MIMEType)
			require.Nil(t, a.Description)
			require.Equal(t, "null", string(a.raw["description"]), "an unset description is null, not omitted")
			require.Equal(t, a.CreatedAt, a.UpdatedAt)
			require.WithinDuration(t, time.Now(), a.CreatedAt, time.Minute)

			// The read gives the same row, and no URL unless asked.
			got, getURL := h.getArtifact(t, a.ID, "")
			require.Nil(t, getURL, "get_url is omitted without presign")
			require.Equal(t, a.raw, got.raw)

			dl := h.presign(t, a.ID)
			require.Equal(t, "attachment", query(t, dl, "response-content-disposition"))
			require.Equal(t, "900", query(t, dl, "X-Amz-Expires"), "the default TTL is the maximum")
			status, hdr, bytes := fetch(t, dl)
			require.Equal(t, http.StatusOK, status, string(bytes))
			require.Equal(t, c.body, bytes)
			require.Equal(t, "attachment", hdr.Get("Content-Disposition"))
			require.Equal(t, c.mime, hdr.Get("Content-Type"))

			require.Equal(t, st.Key, a.ObjectKey, "register takes the uploaded object where it lies: no copy")
			_, size, found = h.head(t, a.ObjectKey)
			require.True(t, found, "the final object exists")
			require.Equal(t, int64(len(c.body)), size)
			require.Equal(t, []string{a.ObjectKey}, h.objects(t, "store/"+ws+"/"))
			require.Empty(t, h.objects(t, "staging/"+ws+"/"))

			events := h.b.audit(t, ws)
			require.Len(t, events, 2)
			require.Equal(t, "NEW_WORKSPACE", events[0].Type)
			require.Equal(t, "NEW_ARTIFACT", events[1].Type)
			require.Equal(t, map[string]any{"workspace_id": ws, "artifact_id": a.ID, "artifact_name": name,
				"object_key": a.ObjectKey, "mime_type": c.mime, "size": float64(len(c.body))}, events[1].Metadata)
			require.Empty(t, h.released(t, ws))
		})
	}

	// A signed Content-Type shapes the PUT only: the artifact's type is
	// still sniffed.
	t.Run("OKContentTypeSignedNotTrusted", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		body := []byte("<html><body><script>alert(1)</script></body></html>")
		st := h.mintRaw(t, ws, sprintf(`{"size":%d,"sha256_b64":%q,"content_type":"image/png"}`,
			len(body), sha256B64(body)))
		require.Equal(t, "content-length;content-type;host;x-amz-checksum-sha256",
			query(t, st.PutURL, "X-Amz-SignedHeaders"))
		status, resp := put(t, st.PutURL, body, sha256B64(body), "Content-Type", "image/png")
		require.Equal(t, http.StatusOK, status, resp)

		a := h.artifactOf(t, h.register(t, ws, st.Key, "page"))
		require.Equal(t, "text/html; charset=utf-8", a.MIMEType)
		contentType, _, found := h.head(t, a.ObjectKey)
		require.True(t, found)
		require.Equal(t, "image/png", contentType, "the object keeps what its PUT said…")
		status, hdr, got := fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "text/html; charset=utf-8", hdr.Get("Content-Type"), "…but a GET is served with the sniffed type")
		require.Equal(t, body, got)
		require.Equal(t, "attachment", hdr.Get("Content-Disposition"), "active content downloads, never renders")
	})

	t.Run("OKDescriptionAtRegister", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		key := h.stage(t, ws, []byte(`{"a":1}`))
		a := h.artifactOf(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
			sprintf(`{"staging_object_key":%q,"name":"data","description":"the numbers","unknown":1}`, key)))
		require.Equal(t, "application/json", a.MIMEType)
		require.NotNil(t, a.Description)
		require.Equal(t, "the numbers", *a.Description)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		ghost := "00000000-0000-4000-8000-000000000000"
		h.failsArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ghost+"/new-staging", mintBody([]byte("x"))),
			http.StatusNotFound, "workspace_not_found")
		h.failsArt(t, h.register(t, ghost, "staging/"+ghost+"/"+newULID(), "x"),
			http.StatusNotFound, "workspace_not_found")
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		for _, q := range []string{"", "?presign", "?presign&ttl=5"} {
			e := h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+newULID()+q, ""),
				http.StatusNotFound, "artifact_not_found")
			require.Contains(t, e.Message, "Failed to fetch artifact ")
		}
	})
}

// TestArtifactNames checks the name rule and uniqueness on register and
// rename.
func TestArtifactNames(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})

	t.Run("ErrNameTakenAtRegister", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		first := h.upload(t, ws, "report", []byte("first"))
		key := h.stage(t, ws, []byte("second"))

		e := h.failsArt(t, h.register(t, ws, key, "report"), http.StatusConflict, "name_taken")
		require.Equal(t, "Failed to register artifact 'report' in workspace "+ws, e.Message)
		require.Equal(t, "workspace "+ws+" already has an artifact named 'report'", e.Detail)
		require.Equal(t, 1, h.rows(t, ws))
		require.ElementsMatch(t, []string{first.ObjectKey, key}, h.objects(t, "store/"+ws+"/"), "nothing was copied")
		_, _, found := h.head(t, key)
		require.True(t, found, "the upload is left for a retry under another name")

		// The same staging object registers under a free name.
		h.artifactOf(t, h.register(t, ws, key, "report-2"))
	})

	// Concurrent registers of one name all pass the pre-check; the unique
	// index picks one winner, the others get 409 and keep their uploads for
	// a retry (the reaper takes them by age otherwise).
	t.Run("ErrNameTakenConcurrently", func(t *testing.T) {
		t.Parallel()
		const racers = 10
		ws := h.newWorkspace(t)
		stagingKeys := make([]string, racers)
		for i := range racers {
			stagingKeys[i] = h.stage(t, ws, []byte(sprintf("racer %d", i)))
		}
		results := make([]*response, racers)
		errs := make([]error, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start
				results[i], errs[i] = trySend(t.Context(), http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
					sprintf(`{"staging_object_key":%q,"name":"prize"}`, stagingKeys[i]))
			})
		}
		close(start)
		wg.Wait()
		var winner *artifact
		for i, r := range results {
			require.NoError(t, errs[i])
			if r.status == http.StatusOK {
				require.Nil(t, winner, "two registers won one name")
				winner = h.artifactOf(t, r)
				continue
			}
			h.failsArt(t, r, http.StatusConflict, "name_taken")
		}
		require.NotNil(t, winner)
		require.Equal(t, 1, h.rows(t, ws))
		require.Contains(t, stagingKeys, winner.ObjectKey)
		require.ElementsMatch(t, stagingKeys, h.objects(t, "store/"+ws+"/"), "no copies: every upload lies where it was put")
		require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT"}, h.b.auditTypes(t, ws))
	})

	t.Run("ErrNameTakenByMissingObject", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "gone", []byte("x"))
		h.setMissing(t, a.ID)
		key := h.stage(t, ws, []byte("y"))
		h.failsArt(t, h.register(t, ws, key, "gone"), http.StatusConflict, "name_taken")
	})

	t.Run("OKSameNameOtherWorkspace", func(t *testing.T) {
		t.Parallel()
		ws1, ws2 := h.newWorkspace(t), h.newWorkspace(t)
		h.upload(t, ws1, "shared", []byte("1"))
		h.upload(t, ws2, "shared", []byte("2"))
	})

	t.Run("OKNamesAreCaseSensitive", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		h.upload(t, ws, "Doc", []byte("1"))
		h.upload(t, ws, "doc", []byte("2"))
	})

	t.Run("ErrInvalidNameAtRegister", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		key := h.stage(t, ws, []byte("x"))
		for _, name := range []string{"", "a b", "a.b", "../x", "ü", "a/b", strings128() + "n"} {
			e := h.failsArt(t, h.register(t, ws, key, name), http.StatusBadRequest, "invalid_name")
			require.Equal(t, "New artifact parameters not valid", e.Message)
		}
		// A name is checked before the key.
		h.failsArt(t, h.register(t, ws, "nonsense", "a b"), http.StatusBadRequest, "invalid_name")
		require.Zero(t, h.rows(t, ws))
		h.artifactOf(t, h.register(t, ws, key, strings128()))
	})

	t.Run("OKRename", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "old", []byte("x"))
		r := h.artifactOf(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/name?name=new", ""))
		require.Equal(t, "new", r.Name)
		require.Equal(t, a.ObjectKey, r.ObjectKey, "a rename moves no bytes")
		require.True(t, r.UpdatedAt.After(a.UpdatedAt))
		require.Equal(t, a.CreatedAt, r.CreatedAt)
		// The old name is free at once.
		h.upload(t, ws, "old", []byte("y"))

		events := h.b.audit(t, ws)
		rename := events[2]
		require.Equal(t, "RENAME_ARTIFACT", rename.Type)
		require.Equal(t, map[string]any{"workspace_id": ws, "artifact_id": a.ID,
			"old_artifact_name": "old", "new_artifact_name": "new"}, rename.Metadata)
	})

	t.Run("OKRenameToOwnName", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "same", []byte("x"))
		r := h.artifactOf(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/name?name=same", ""))
		require.Equal(t, "same", r.Name)
		require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT", "RENAME_ARTIFACT"}, h.b.auditTypes(t, ws),
			"a no-op rename is still audited")
	})

	t.Run("ErrNameTakenAtRename", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		h.upload(t, ws, "one", []byte("1"))
		two := h.upload(t, ws, "two", []byte("2"))
		e := h.failsArt(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+two.ID+"/name?name=one", ""),
			http.StatusConflict, "name_taken")
		require.Equal(t, "Failed to update artifact "+two.ID+" name to 'one'", e.Message)
		require.Equal(t, "workspace "+ws+" already has an artifact named 'one'", e.Detail)
		got, _ := h.getArtifact(t, two.ID, "")
		require.Equal(t, "two", got.Name)
		require.Equal(t, two.UpdatedAt, got.UpdatedAt, "a refused rename changes nothing")
		require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT", "NEW_ARTIFACT"}, h.b.auditTypes(t, ws))
	})

	t.Run("ErrInvalidNameAtRename", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "fine", []byte("x"))
		for _, name := range []string{"a%20b", "a.b", "..", "%C3%BC", strings128() + "n"} {
			h.failsArt(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/name?name="+name, ""),
				http.StatusBadRequest, "invalid_name")
		}
		for _, q := range []string{"", "?name=", "?other=x"} {
			e := h.failsArt(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/name"+q, ""),
				http.StatusBadRequest, "invalid_query")
			require.Equal(t, "Query parameter 'name' is required", e.Message)
		}
		got, _ := h.getArtifact(t, a.ID, "")
		require.Equal(t, "fine", got.Name)
	})

	t.Run("ErrRenameArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		h.failsArt(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+newULID()+"/name?name=x", ""),
			http.StatusNotFound, "artifact_not_found")
	})
}

// TestListArtifacts checks GET /v1/workspaces/{id}/artifacts.
func TestListArtifacts(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	ws := h.newWorkspace(t)
	a := h.upload(t, ws, "a", []byte("a"))
	b := h.upload(t, ws, "b", []byte("b"))
	c := h.upload(t, ws, "c", []byte("c"))
	h.setMissing(t, b.ID)
	other := h.newWorkspace(t)
	h.upload(t, other, "a", []byte("elsewhere"))
	empty := h.newWorkspace(t)

	list := func(t *testing.T, id, q string) []string {
		t.Helper()
		r := do(t, http.MethodGet, h.url+"/v1/workspaces/"+id+"/artifacts"+q, "")
		env := h.okArt(t, r)
		if env.Artifacts == nil {
			require.NotContains(t, env.raw, "artifacts")
			return nil
		}
		var names []string
		for _, item := range decodeArtifacts(t, env.Artifacts) {
			require.Equal(t, id, item.WorkspaceID)
			names = append(names, item.Name)
		}
		require.NotEmpty(t, names, "an empty list omits the key")
		return names
	}

	cases := []struct {
		name  string
		query string
		want  []string
	}{
		{"OKDefaultRecordedOnly", "", []string{"a", "c"}},
		{"OKBothStates", "?state=RECORDED&state=MISSING_OBJECT", []string{"a", "b", "c"}},
		{"OKMissingOnly", "?state=MISSING_OBJECT", []string{"b"}},
		{"OKNameFilter", "?name=a&name=c", []string{"a", "c"}},
		{"OKNameFilterDefaultState", "?name=a&name=b", []string{"a"}},
		{"OKNameFilterBothStates", "?name=b&state=MISSING_OBJECT&state=RECORDED", []string{"b"}},
		{"OKNameFilterNoMatch", "?name=zzz", nil},
		{"OKFirstPage", "?state=RECORDED&state=MISSING_OBJECT&limit=2", []string{"a", "b"}},
		{"OKSecondPage", "?state=RECORDED&state=MISSING_OBJECT&limit=2&offset=2", []string{"c"}},
		{"OKPastTheEnd", "?offset=5", nil},
		{"OKUnknownParameterIgnored", "?colour=red", []string{"a", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, list(t, ws, tc.query))
		})
	}

	t.Run("OKEmptyOmitsKey", func(t *testing.T) {
		t.Parallel()
		r := do(t, http.MethodGet, h.url+"/v1/workspaces/"+empty+"/artifacts", "")
		env := h.okArt(t, r)
		require.ElementsMatch(t, []string{"success", "request_id"}, keys(env.raw))
	})

	t.Run("OKItemsMatchGet", func(t *testing.T) {
		t.Parallel()
		env := h.okArt(t, do(t, http.MethodGet, h.url+"/v1/workspaces/"+ws+"/artifacts?state=MISSING_OBJECT&state=RECORDED", ""))
		items := decodeArtifacts(t, env.Artifacts)
		require.Len(t, items, 3)
		for i, want := range []*artifact{a, b, c} {
			got, _ := h.getArtifact(t, want.ID, "")
			require.Equal(t, got.raw, items[i].raw)
		}
		require.Equal(t, "MISSING_OBJECT", items[1].State)
	})

	for _, q := range []string{"?state=recorded", "?state=DELETED", "?state=", "?state=RECORDED&state=x",
		"?offset=-1", "?offset=x", "?limit=0", "?limit=1001", "?limit=x"} {
		t.Run("ErrInvalidQuery"+q, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/workspaces/"+ws+"/artifacts"+q, ""),
				http.StatusBadRequest, "invalid_query")
			if strings.HasPrefix(q, "?state") {
				require.Equal(t, "Failed to list workspace "+ws+" artifacts", e.Message)
			}
		})
	}

	t.Run("ErrInvalidNameFilter", func(t *testing.T) {
		t.Parallel()
		h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/workspaces/"+ws+"/artifacts?name=a.b", ""),
			http.StatusBadRequest, "invalid_name")
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/workspaces/"+newULID()+"/artifacts", ""),
			http.StatusNotFound, "workspace_not_found")
	})
}

// TestDeleteArtifact checks DELETE /v1/artifacts/{id}.
func TestDeleteArtifact(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})

	t.Run("OKUnknownID", func(t *testing.T) {
		t.Parallel()
		bare(t, do(t, http.MethodDelete, h.url+"/v1/artifacts/"+newULID(), ""))
		bare(t, do(t, http.MethodDelete, h.url+"/v1/artifacts/not-even-a-ulid", ""))
	})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		body := []byte("to be deleted")
		a := h.upload(t, ws, "doomed", body)
		getURL := h.presign(t, a.ID)

		bare(t, do(t, http.MethodDelete, h.url+"/v1/artifacts/"+a.ID, ""))
		h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+a.ID, ""), http.StatusNotFound, "artifact_not_found")
		require.Zero(t, h.rows(t, ws))
		require.Equal(t, []string{a.ObjectKey}, h.released(t, ws))
		var releasedAt time.Time
		require.NoError(t, h.b.db.QueryRow(t.Context(),
			`SELECT released_at FROM released_objects WHERE object_key = $1`, a.ObjectKey).Scan(&releasedAt))
		require.WithinDuration(t, time.Now(), releasedAt, time.Minute)

		events := h.b.audit(t, ws)
		require.Len(t, events, 3)
		require.Equal(t, "DELETE_ARTIFACT", events[2].Type)
		require.Equal(t, map[string]any{"workspace_id": ws, "artifact_id": a.ID, "artifact_name": "doomed",
			"object_key": a.ObjectKey}, events[2].Metadata)

		// Only the row goes: the object waits for the reaper's grace
		// window, so a URL minted before still serves it.
		_, _, found := h.head(t, a.ObjectKey)
		require.True(t, found)
		status, _, got := fetch(t, getURL)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, body, got)

		// The name is free at once; a second delete is a no-op.
		b := h.upload(t, ws, "doomed", []byte("again"))
		require.NotEqual(t, a.ID, b.ID)
		bare(t, do(t, http.MethodDelete, h.url+"/v1/artifacts/"+a.ID, ""))
		require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT", "DELETE_ARTIFACT", "NEW_ARTIFACT"},
			h.b.auditTypes(t, ws))
		require.Equal(t, 1, h.rows(t, ws))
	})

	t.Run("OKMissingObject", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "missing", []byte("x"))
		h.setMissing(t, a.ID)
		bare(t, do(t, http.MethodDelete, h.url+"/v1/artifacts/"+a.ID, ""))
		require.Zero(t, h.rows(t, ws))
		require.Equal(t, []string{a.ObjectKey}, h.released(t, ws))
	})
}

// TestArtifactDescription checks PUT /v1/artifacts/{id}/description.
func TestArtifactDescription(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	describe := func(t *testing.T, id, body string) *response {
		t.Helper()
		return do(t, http.MethodPut, h.url+"/v1/artifacts/"+id+"/description", body)
	}

	t.Run("OKSetAndClear", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "d", []byte("x"))

		set := h.artifactOf(t, describe(t, a.ID, `{"description":"written by hand ✓"}`))
		require.Equal(t, "written by hand ✓", *set.Description)
		require.True(t, set.UpdatedAt.After(a.UpdatedAt))
		got, _ := h.getArtifact(t, a.ID, "")
		require.Equal(t, set.raw, got.raw)

		empty := h.artifactOf(t, describe(t, a.ID, `{"description":""}`))
		require.NotNil(t, empty.Description)
		require.Equal(t, `""`, string(empty.raw["description"]))

		cleared := h.artifactOf(t, describe(t, a.ID, `{"description":null}`))
		require.Equal(t, "null", string(cleared.raw["description"]))
		h.artifactOf(t, describe(t, a.ID, `{"description":"again"}`))
		absent := h.artifactOf(t, describe(t, a.ID, `{}`))
		require.Nil(t, absent.Description, "an absent description clears")

		full := strings.Repeat("é", 2048)
		require.Equal(t, full, *h.artifactOf(t, describe(t, a.ID, `{"description":"`+full+`"}`)).Description)

		require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT"}, h.b.auditTypes(t, ws),
			"description edits are not audited")
		require.Equal(t, a.ObjectKey, absent.ObjectKey)
	})

	t.Run("ErrInvalidParameters", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "d", []byte("x"))
		h.failsArt(t, describe(t, a.ID, `{"description":"`+strings.Repeat("x", 4097)+`"}`),
			http.StatusBadRequest, "invalid_parameters")
		got, _ := h.getArtifact(t, a.ID, "")
		require.Nil(t, got.Description)
	})

	t.Run("ErrInvalidJSON", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "d", []byte("x"))
		for _, body := range []string{"", "{", `{"description":5}`, `[]`} {
			e := h.failsArt(t, describe(t, a.ID, body), http.StatusBadRequest, "invalid_json")
			require.Equal(t, "Unable to parse new artifact description from request", e.Message)
		}
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		h.failsArt(t, describe(t, newULID(), `{"description":"x"}`), http.StatusNotFound, "artifact_not_found")
	})
}

// TestGetArtifactQuery checks the presign and ttl parameters of
// GET /v1/artifacts/{id}.
func TestGetArtifactQuery(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	ws := h.newWorkspace(t)
	body := []byte("presign me")
	a := h.upload(t, ws, "p", body)
	missing := h.upload(t, ws, "m", []byte("flagged"))
	h.setMissing(t, missing.ID)

	for _, q := range []string{"?presign", "?presign=", "?presign=1", "?presign=t", "?presign=T",
		"?presign=TRUE", "?presign=true", "?presign=True"} {
		t.Run("OKPresign"+q, func(t *testing.T) {
			t.Parallel()
			_, u := h.getArtifact(t, a.ID, q)
			require.NotNil(t, u)
			status, _, got := fetch(t, *u)
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, body, got)
		})
	}
	for _, q := range []string{"", "?presign=0", "?presign=f", "?presign=F", "?presign=FALSE",
		"?presign=false", "?presign=False", "?ttl=5", "?other=1"} {
		t.Run("OKNoURL"+q, func(t *testing.T) {
			t.Parallel()
			r := do(t, http.MethodGet, h.url+"/v1/artifacts/"+a.ID+q, "")
			env := h.okArt(t, r)
			require.ElementsMatch(t, []string{"success", "request_id", "artifact"}, keys(env.raw))
		})
	}

	t.Run("OKTTL", func(t *testing.T) {
		t.Parallel()
		for ttl, want := range map[string]string{"5": "5", "1": "1", "899": "899", "900": "900",
			"901": "900", "86400": "900", "99999999": "900"} {
			_, u := h.getArtifact(t, a.ID, "?presign&ttl="+ttl)
			require.NotNil(t, u)
			require.Equal(t, want, query(t, *u, "X-Amz-Expires"), "ttl=%s", ttl)
			require.Equal(t, "attachment", query(t, *u, "response-content-disposition"))
		}
	})

	for _, q := range []string{"?presign=maybe", "?presign=yes", "?presign=2", "?presign=maybe&ttl=5"} {
		t.Run("ErrPresign"+q, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+a.ID+q, ""),
				http.StatusBadRequest, "invalid_query")
			require.Equal(t, "Query parameter 'presign' must be a boolean", e.Message)
		})
	}

	ttlCases := map[string]string{
		"?ttl=0":            "Query parameter 'ttl' must be a positive number of seconds",
		"?ttl=-5":           "Query parameter 'ttl' must be a positive number of seconds",
		"?presign&ttl=0":    "Query parameter 'ttl' must be a positive number of seconds",
		"?ttl=x":            "Query parameter 'ttl' must be an integer number of seconds",
		"?ttl=":             "Query parameter 'ttl' must be an integer number of seconds",
		"?ttl=1.5":          "Query parameter 'ttl' must be an integer number of seconds",
		"?presign=0&ttl=5s": "Query parameter 'ttl' must be an integer number of seconds",
	}
	for q, msg := range ttlCases {
		t.Run("ErrTTL"+q, func(t *testing.T) {
			t.Parallel()
			e := h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+a.ID+q, ""),
				http.StatusBadRequest, "invalid_query")
			require.Equal(t, msg, e.Message)
		})
	}

	t.Run("ErrQueryBeforeLookup", func(t *testing.T) {
		t.Parallel()
		h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+newULID()+"?ttl=x", ""),
			http.StatusBadRequest, "invalid_query")
	})

	t.Run("ErrObjectMissing", func(t *testing.T) {
		t.Parallel()
		e := h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+missing.ID+"?presign", ""),
			http.StatusConflict, "object_missing")
		require.Equal(t, "Failed to mint a GET URL for artifact "+missing.ID, e.Message)
		require.Equal(t, "artifact "+missing.ID+" is 'MISSING_OBJECT'; only a 'RECORDED' artifact has a servable object",
			e.Detail)
		// Without presign the row still reads.
		got, u := h.getArtifact(t, missing.ID, "?presign=false")
		require.Nil(t, u)
		require.Equal(t, "MISSING_OBJECT", got.State)
	})

	t.Run("OKURLIsForThisObjectOnly", func(t *testing.T) {
		t.Parallel()
		u := h.presign(t, a.ID)
		require.Equal(t, "/"+h.bucket+"/"+a.ObjectKey, mustParse(t, u).Path)
		tampered := strings.Replace(u, a.ObjectKey, missing.ObjectKey, 1)
		status, _, got := fetch(t, tampered)
		require.Equal(t, http.StatusForbidden, status, string(got))
	})
}

func mustParse(t testing.TB, rawURL string) *url.URL {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return u
}
