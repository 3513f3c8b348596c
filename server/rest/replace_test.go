package rest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReplaceContent checks PUT /v1/artifacts/{id}/content: a new key, the
// old one released but still served through a URL minted before, and
// MISSING_OBJECT repaired.
func TestReplaceContent(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		oldBody := []byte("version one, plain text\n")
		a := h.upload(t, ws, "doc", oldBody)
		oldURL := h.presign(t, a.ID)

		newBody := []byte("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n")
		key := h.stage(t, ws, newBody)
		r := h.artifactOf(t, h.replace(t, a.ID, key))
		require.Equal(t, a.ID, r.ID)
		require.Equal(t, "doc", r.Name)
		require.Equal(t, "RECORDED", r.State)
		require.NotEqual(t, a.ObjectKey, r.ObjectKey, "every content write mints a new key")
		require.Equal(t, int64(len(newBody)), r.Size)
		require.Equal(t, "application/pdf", r.MIMEType)
		require.Equal(t, a.CreatedAt, r.CreatedAt)
		require.True(t, r.UpdatedAt.After(a.UpdatedAt))
		got, _ := h.getArtifact(t, a.ID, "")
		require.Equal(t, r.raw, got.raw)

		require.Equal(t, []string{a.ObjectKey}, h.released(t, ws))
		events := h.b.audit(t, ws)
		require.Len(t, events, 3)
		require.Equal(t, "UPDATE_ARTIFACT_OBJECT", events[2].Type)
		require.Equal(t, map[string]any{"workspace_id": ws, "artifact_id": a.ID, "artifact_name": "doc",
			"old_object_key": a.ObjectKey, "old_mime_type": "text/plain; charset=utf-8", "old_size": float64(len(oldBody)),
			"new_object_key": r.ObjectKey, "new_mime_type": "application/pdf", "new_size": float64(len(newBody)),
		}, events[2].Metadata)

		// The upload became the content where it lies; the old object stays
		// until the reaper's grace window ends.
		require.Equal(t, key, r.ObjectKey)
		_, _, found := h.head(t, r.ObjectKey)
		require.True(t, found)
		require.ElementsMatch(t, []string{a.ObjectKey, r.ObjectKey}, h.objects(t, "store/"+ws+"/"))

		status, hdr, body := fetch(t, oldURL)
		require.Equal(t, http.StatusOK, status, "a URL minted before the replace keeps working")
		require.Equal(t, oldBody, body)
		require.Equal(t, "text/plain; charset=utf-8", hdr.Get("Content-Type"))
		status, hdr, body = fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, newBody, body)
		require.Equal(t, "application/pdf", hdr.Get("Content-Type"))
		require.Equal(t, "attachment", hdr.Get("Content-Disposition"))
	})

	t.Run("OKEmpty", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "doc", []byte("not empty"))
		r := h.artifactOf(t, h.replace(t, a.ID, h.stage(t, ws, nil)))
		require.Zero(t, r.Size)
		require.Equal(t, "text/plain", r.MIMEType)
		status, _, body := fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Empty(t, body)
	})

	t.Run("OKRestoresMissingObject", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "lost", []byte("lost bytes"))
		h.setMissing(t, a.ID)
		e := h.failsArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+a.ID+"?presign", ""),
			http.StatusConflict, "object_missing")
		require.Contains(t, e.Detail, "'MISSING_OBJECT'")

		body := []byte("found again")
		r := h.artifactOf(t, h.replace(t, a.ID, h.stage(t, ws, body)))
		require.Equal(t, "RECORDED", r.State)
		require.Equal(t, []string{a.ObjectKey}, h.released(t, ws))
		status, _, got := fetch(t, h.presign(t, a.ID))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, body, got)
		list := h.okArt(t, do(t, http.MethodGet, h.url+"/v1/workspaces/"+ws+"/artifacts", ""))
		require.Len(t, decodeArtifacts(t, list.Artifacts), 1, "listed by default again")
	})

	t.Run("ErrStagingNotFound", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "doc", []byte("x"))
		st := h.mint(t, ws, []byte("never uploaded"))
		e := h.failsArt(t, h.replace(t, a.ID, st.Key), http.StatusBadRequest, "staging_not_found")
		require.Equal(t, "Failed to update artifact "+a.ID+" content", e.Message)
		got, _ := h.getArtifact(t, a.ID, "")
		require.Equal(t, a.raw, got.raw)
		require.Empty(t, h.released(t, ws))
		require.Equal(t, []string{"NEW_WORKSPACE", "NEW_ARTIFACT"}, h.b.auditTypes(t, ws))
		require.Equal(t, []string{a.ObjectKey}, h.objects(t, "store/"+ws+"/"))
	})

	t.Run("ErrStagingKeyOfAnotherWorkspace", func(t *testing.T) {
		t.Parallel()
		ws, other := h.newWorkspace(t), h.newWorkspace(t)
		a := h.upload(t, ws, "doc", []byte("x"))
		key := h.stage(t, other, []byte("theirs"))
		h.failsArt(t, h.replace(t, a.ID, key), http.StatusBadRequest, "staging_key_invalid")
		_, _, found := h.head(t, key)
		require.True(t, found)
		got, _ := h.getArtifact(t, a.ID, "")
		require.Equal(t, a.raw, got.raw)
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		key := h.stage(t, ws, []byte("x"))
		id := newULID()
		e := h.failsArt(t, h.replace(t, id, key), http.StatusNotFound, "artifact_not_found")
		require.Equal(t, "Failed to fetch artifact "+id, e.Message)
		_, _, found := h.head(t, key)
		require.True(t, found)
	})

	t.Run("ErrBadBody", func(t *testing.T) {
		t.Parallel()
		ws := h.newWorkspace(t)
		a := h.upload(t, ws, "doc", []byte("x"))
		for _, body := range []string{`{}`, `{"staging_object_key":""}`} {
			e := h.failsArt(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/content", body),
				http.StatusBadRequest, "invalid_parameters")
			require.Equal(t, "New artifact content parameters not valid", e.Message)
		}
		for _, body := range []string{"", "{", `{"staging_object_key":1}`} {
			e := h.failsArt(t, do(t, http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/content", body),
				http.StatusBadRequest, "invalid_json")
			require.Equal(t, "Unable to parse new artifact content parameters from request", e.Message)
		}
	})
}

// TestConcurrentReplace sends 20 content replacements of one artifact at
// once, each with its own upload. Last writer wins, but no
// key may be lost: every key a successful call wrote is either the row's
// or released, exactly once, and so is the original.
func TestConcurrentReplace(t *testing.T) {
	t.Parallel()
	const writers = 20
	h := setupArtifacts(t, artConfig{})
	ws := h.newWorkspace(t)
	a := h.upload(t, ws, "contended", []byte("original"))

	stagingKeys := make([]string, writers)
	for i := range writers {
		stagingKeys[i] = h.stage(t, ws, []byte(sprintf("writer %02d", i)))
	}

	// The goroutines only send; the test goroutine checks.
	results := make([]*response, writers)
	errs := make([]error, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			<-start
			results[i], errs[i] = trySend(t.Context(), http.MethodPut, h.url+"/v1/artifacts/"+a.ID+"/content",
				sprintf(`{"staging_object_key":%q}`, stagingKeys[i]))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "writer %d", i)
	}

	var written []string // the keys successful calls wrote
	contentOf := map[string]string{}
	for i, r := range results {
		if r.status != http.StatusOK {
			// A clean failure: an envelope, nothing else.
			var env envelope
			require.NoError(t, json.Unmarshal(r.body, &env), "writer %d: %s", i, r.body)
			require.False(t, env.Success)
			require.NotNil(t, env.Error)
			require.Equal(t, r.status, env.Error.Code)
			require.NotEmpty(t, env.Error.Reason)
			h.requireClean(t, r.body)
			t.Logf("writer %d failed cleanly: %d %s", i, r.status, env.Error.Reason)
			continue
		}
		got := h.artifactOf(t, r)
		require.Equal(t, "RECORDED", got.State)
		written = append(written, got.ObjectKey)
		contentOf[got.ObjectKey] = sprintf("writer %02d", i)
	}
	t.Logf("%d of %d replacements succeeded", len(written), writers)
	require.NotEmpty(t, written)
	require.Len(t, contentOf, len(written), "every success wrote its own key")
	require.NotContains(t, written, a.ObjectKey)

	final, _ := h.getArtifact(t, a.ID, "")
	require.Contains(t, written, final.ObjectKey, "the row ends on a key a successful call wrote")

	// Released: the original and every written key but the row's, each
	// once; nothing the row still references.
	wantReleased := []string{a.ObjectKey}
	for _, k := range written {
		if k != final.ObjectKey {
			wantReleased = append(wantReleased, k)
		}
	}
	slices.Sort(wantReleased)
	require.Equal(t, wantReleased, h.released(t, ws))
	require.NotContains(t, h.released(t, ws), final.ObjectKey)

	// The audit trail is one chain: each replacement's old key is the key
	// the one before wrote, so no two replaced the same key.
	var olds, news []string
	for _, ev := range h.b.audit(t, ws) {
		if ev.Type == "UPDATE_ARTIFACT_OBJECT" {
			olds = append(olds, ev.Metadata["old_object_key"].(string))
			news = append(news, ev.Metadata["new_object_key"].(string))
		}
	}
	require.Len(t, olds, len(written))
	require.ElementsMatch(t, written, news)
	slices.Sort(olds)
	require.Equal(t, wantReleased, olds, "each key was replaced exactly once")
	require.Len(t, slices.Compact(slices.Clone(olds)), len(olds))

	// The bucket holds the original and the written keys, no orphaned
	// copy, and no staging object of a successful call.
	wantObjects := append([]string{a.ObjectKey}, written...)
	slices.Sort(wantObjects)
	require.Equal(t, wantObjects, h.objects(t, "store/"+ws+"/"))
	require.Len(t, h.objects(t, "staging/"+ws+"/"), writers-len(written))

	// The row serves the content its key was written with.
	status, _, body := fetch(t, h.presign(t, a.ID))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, contentOf[final.ObjectKey], string(body))
	require.Equal(t, 1, h.rows(t, ws))
}

// trySend is do for other goroutines than the test's: it reports a
// transport failure instead of failing the test.
func trySend(ctx context.Context, method, url, body string) (*response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := noRedirect.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{status: resp.StatusCode, header: resp.Header, body: b}, nil
}
