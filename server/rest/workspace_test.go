package rest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/rest"
)

func TestCreateWorkspace(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		before := time.Now().UTC().Add(-time.Second)

		r := do(t, http.MethodPost, u+"/v1/workspaces", `{"name":"alpha"}`)
		env := ok(t, r)
		ws := decodeWorkspace(t, env.Workspace, b.app)

		require.Equal(t, "alpha", ws.Name)
		require.Equal(t, "NONE", ws.VolumeState)
		require.NotContains(t, ws.raw, "description", "a NULL description is omitted")
		require.NotContains(t, ws.raw, "volume_metadata", "NULL volume metadata is omitted")
		require.NotContains(t, ws.raw, "volume_issue", "no issue is omitted")
		require.Equal(t, ws.CreatedAt, ws.UpdatedAt)
		require.WithinRange(t, ws.CreatedAt, before, time.Now().Add(time.Second))
		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r.body, &top))
		require.ElementsMatch(t, []string{"success", "request_id", "workspace"}, keys(top))

		// The create answer equals what is read back later, timestamps
		// included (UTC, microseconds, as stored).
		got, mounts := get(t, u, b, ws.ID)
		require.Equal(t, ws.raw, got.raw)
		require.Equal(t, -1, mounts)

		events := b.audit(t, ws.ID)
		require.Len(t, events, 1)
		require.Equal(t, "NEW_WORKSPACE", events[0].Type)
		require.Equal(t, map[string]any{
			"workspace_id": ws.ID, "workspace_name": "alpha", "volume_name": ws.VolumeName,
		}, events[0].Metadata)
	})

	t.Run("OKEmptyDescriptionAndMetadataKept", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})

		ws := create(t, u, b, `{"name":"beta","description":"","volume_metadata":{}}`)

		require.JSONEq(t, `""`, string(ws.raw["description"]), "an explicit empty description is kept")
		require.JSONEq(t, `{}`, string(ws.raw["volume_metadata"]))
		got, _ := get(t, u, b, ws.ID)
		require.Equal(t, ws.raw, got.raw)
	})

	t.Run("OKFullWithUnknownFieldsIgnored", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})

		ws := create(t, u, b, `{"name":"Gamma_9-x","description":"scratch space",
			"volume_metadata":{"size_bytes":1073741824,"extra":1},"color":"blue"}`)

		require.Equal(t, "Gamma_9-x", ws.Name)
		require.Equal(t, "scratch space", *ws.Description)
		require.JSONEq(t, `{"size_bytes":1073741824}`, string(ws.raw["volume_metadata"]))
		require.NotContains(t, ws.raw, "color")
		got, _ := get(t, u, b, ws.ID)
		require.Equal(t, ws.raw, got.raw)
	})

	t.Run("OKNameOf128", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		name := strings128()

		ws := create(t, u, b, `{"name":"`+name+`"}`)

		require.Equal(t, name, ws.Name)
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		first := create(t, u, b, `{"name":"taken"}`)
		rows, events := b.count(t, "workspaces"), b.count(t, "audit_system_events")

		e := fails(t, do(t, http.MethodPost, u+"/v1/workspaces", `{"name":"taken","description":"x"}`),
			http.StatusConflict, "name_taken")

		require.Equal(t, "Failed to define new workspace 'taken'", e.Message)
		require.Equal(t, "a workspace named 'taken' already exists", e.Detail)
		require.Equal(t, rows, b.count(t, "workspaces"))
		require.Equal(t, events, b.count(t, "audit_system_events"), "a refused create is not audited")
		require.Equal(t, []string{"NEW_WORKSPACE"}, b.auditTypes(t, first.ID))
	})

	t.Run("ErrNamesAreCaseSensitive", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		create(t, u, b, `{"name":"Case"}`)

		ws := create(t, u, b, `{"name":"case"}`)

		require.Equal(t, "case", ws.Name)
	})
}

func TestListWorkspaces(t *testing.T) {
	t.Parallel()

	t.Run("OKEmptyOmitsKey", func(t *testing.T) {
		t.Parallel()
		u, _ := setup(t, rest.Config{})

		bare(t, do(t, http.MethodGet, u+"/v1/workspaces", ""))
	})

	t.Run("OKFiltersAndPages", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		var all []*workspace
		for _, name := range []string{"w0", "w1", "w2", "w3", "w4"} {
			all = append(all, create(t, u, b, `{"name":"`+name+`"}`))
		}
		// One READY workspace, set behind the API's back: no Docker needed
		// to test the filter.
		b.exec(t, `UPDATE workspaces SET volume_state = 'READY' WHERE id = $1`, all[3].ID)

		list := func(query string) []string {
			t.Helper()
			env := ok(t, do(t, http.MethodGet, u+"/v1/workspaces"+query, ""))
			if env.Workspaces == nil {
				return nil
			}
			require.NotEqual(t, "[]", string(env.Workspaces), "an empty list omits the key")
			var names []string
			for _, ws := range decodeWorkspaces(t, env.Workspaces, b.app) {
				names = append(names, ws.Name)
			}
			return names
		}

		require.Equal(t, []string{"w0", "w1", "w2", "w3", "w4"}, list(""))
		require.Equal(t, []string{"w1", "w4"}, list("?name=w4&name=w1"))
		require.Equal(t, []string{"w2"}, list("?name=w2&name=nope"))
		require.Nil(t, list("?name=nope"))
		require.Equal(t, []string{"w3"}, list("?volume_state=READY"))
		require.Equal(t, []string{"w0", "w1", "w2", "w4"}, list("?volume_state=NONE"))
		require.Equal(t, []string{"w0", "w1", "w2", "w3", "w4"}, list("?volume_state=NONE&volume_state=READY"))
		require.Equal(t, []string{"w3"}, list("?volume_state=READY&name=w3&name=w4"))
		require.Nil(t, list("?volume_state=READY&name=w4"))
		require.Equal(t, []string{"w0", "w1"}, list("?limit=2"))
		require.Equal(t, []string{"w2", "w3"}, list("?offset=2&limit=2"))
		require.Equal(t, []string{"w4"}, list("?offset=4&limit=1000"))
		require.Equal(t, []string{"w3", "w4"}, list("?offset=3"))
		require.Nil(t, list("?offset=5"))
		require.Nil(t, list("?offset=100&limit=10"))
		require.Equal(t, []string{"w1"}, list("?volume_state=NONE&offset=1&limit=1"))
		require.Equal(t, []string{"w0", "w1"}, list("?limit=2&unknown=1"), "unknown parameters are ignored")

		// Every listed workspace is the one a GET answers.
		env := ok(t, do(t, http.MethodGet, u+"/v1/workspaces?name=w3", ""))
		listed := decodeWorkspaces(t, env.Workspaces, b.app)
		got, _ := get(t, u, b, all[3].ID)
		require.Equal(t, got.raw, listed[0].raw)
	})

	t.Run("OKOrderedByCreatedAtThenID", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		// Rows sharing created_at, inserted out of ID order, and one older.
		ids := []string{
			"cccccccc-0000-4000-8000-000000000000",
			"aaaaaaaa-0000-4000-8000-000000000000",
			"bbbbbbbb-0000-4000-8000-000000000000",
			"dddddddd-0000-4000-8000-000000000000",
		}
		at := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC)
		for i, id := range ids {
			created := at
			if i == len(ids)-1 {
				created = at.Add(-time.Hour)
			}
			b.exec(t, `INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $4)`, id, "o"+strconv.Itoa(i), b.app+"-"+id, created)
		}

		env := ok(t, do(t, http.MethodGet, u+"/v1/workspaces", ""))
		var got []string
		for _, ws := range decodeWorkspaces(t, env.Workspaces, b.app) {
			got = append(got, ws.ID)
		}

		require.Equal(t, []string{ids[3], ids[1], ids[2], ids[0]}, got)
		for i, want := range []string{ids[1], ids[2], ids[0]} {
			env := ok(t, do(t, http.MethodGet, u+"/v1/workspaces?limit=1&offset="+strconv.Itoa(i+1), ""))
			page := decodeWorkspaces(t, env.Workspaces, b.app)
			require.Len(t, page, 1)
			require.Equal(t, want, page[0].ID, "offset paging is stable across equal created_at")
		}
	})

	t.Run("ErrListTooLargeUnpaged", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		b.exec(t, `INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
			SELECT id, 'bulk-' || g, $1 || '-' || id, at, at
			FROM (SELECT gen_random_uuid()::text AS id, g, now() + g * interval '1 microsecond' AS at
			      FROM generate_series(1, 10001) g) s`, b.app)

		e := fails(t, do(t, http.MethodGet, u+"/v1/workspaces", ""), http.StatusBadRequest, "list_too_large")
		require.Equal(t, "Failed to list workspaces", e.Message)
		require.Equal(t, "more than 10000 rows match; page with 'limit' (at most 1000) and 'offset'", e.Detail)
		fails(t, do(t, http.MethodGet, u+"/v1/workspaces?offset=0&volume_state=NONE", ""),
			http.StatusBadRequest, "list_too_large")

		// Paged, or narrowed by a filter, the same table lists.
		var page []json.RawMessage
		require.NoError(t, json.Unmarshal(ok(t, do(t, http.MethodGet, u+"/v1/workspaces?limit=1000", "")).Workspaces, &page))
		require.Len(t, page, 1000)
		last := decodeWorkspaces(t, ok(t, do(t, http.MethodGet, u+"/v1/workspaces?offset=10000&limit=1000", "")).Workspaces, b.app)
		require.Len(t, last, 1)
		require.Equal(t, "bulk-10001", last[0].Name)
		named := decodeWorkspaces(t, ok(t, do(t, http.MethodGet, u+"/v1/workspaces?name=bulk-7&name=bulk-70", "")).Workspaces, b.app)
		require.Len(t, named, 2)

		// Exactly 10 000 rows still list unpaged (it is "more than" that fails).
		b.exec(t, `DELETE FROM workspaces WHERE name = 'bulk-1'`)
		require.NoError(t, json.Unmarshal(ok(t, do(t, http.MethodGet, u+"/v1/workspaces", "")).Workspaces, &page))
		require.Len(t, page, 10000)
	})
}

func TestGetWorkspace(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	created := create(t, u, b, `{"name":"one","description":"d","volume_metadata":{"size_bytes":5}}`)

	t.Run("OKWithoutVolumeMountCountMinusOne", func(t *testing.T) {
		r := do(t, http.MethodGet, u+"/v1/workspaces/"+created.ID, "")
		env := ok(t, r)
		var top map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(r.body, &top))
		require.ElementsMatch(t, []string{"success", "request_id", "workspace", "mount_count"}, keys(top))
		require.JSONEq(t, `-1`, string(top["mount_count"]))
		ws := decodeWorkspace(t, env.Workspace, b.app)
		require.Equal(t, created.raw, ws.raw)
	})

	t.Run("OKVolumeIssueShownAndListedAlike", func(t *testing.T) {
		ws := create(t, u, b, `{"name":"stranded"}`)
		// Set behind the API's back, as the maintainer stores what the
		// runtime reported.
		b.exec(t, `UPDATE workspaces SET volume_state = 'READY', volume_issue = 'volume_node_unavailable',
			volume_issue_detail = $2 WHERE id = $1`, ws.ID, `the workspace's volume is on node <n1>, which is cordoned`)

		got, _ := get(t, u, b, ws.ID)
		require.JSONEq(t, `{"reason":"volume_node_unavailable",
			"detail":"the workspace's volume is on node <n1>, which is cordoned"}`, string(got.raw["volume_issue"]))
		env := ok(t, do(t, http.MethodGet, u+"/v1/workspaces?name=stranded", ""))
		listed := decodeWorkspaces(t, env.Workspaces, b.app)
		require.Equal(t, got.raw, listed[0].raw, "the list writes the issue as the GET does")

		b.exec(t, `UPDATE workspaces SET volume_issue = NULL, volume_issue_detail = NULL WHERE id = $1`, ws.ID)
		got, _ = get(t, u, b, ws.ID)
		require.NotContains(t, got.raw, "volume_issue", "a cleared issue is omitted")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		id := uuid.NewString()
		e := fails(t, do(t, http.MethodGet, u+"/v1/workspaces/"+id, ""), http.StatusNotFound, "workspace_not_found")
		require.Equal(t, "Failed to fetch workspace "+id, e.Message)
		require.Equal(t, "workspace '"+id+"' does not exist", e.Detail)
	})
}

func TestRenameWorkspace(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		ws := create(t, u, b, `{"name":"old","description":"keep me"}`)

		// The name comes from the query; a body is not read.
		env := ok(t, do(t, http.MethodPut, u+"/v1/workspaces/"+ws.ID+"/name?name=new", `{"name":"ignored"}`))
		renamed := decodeWorkspace(t, env.Workspace, b.app)

		require.Equal(t, "new", renamed.Name)
		require.Equal(t, ws.VolumeName, renamed.VolumeName, "a rename does not touch the volume name")
		require.Equal(t, "keep me", *renamed.Description)
		require.Equal(t, ws.CreatedAt, renamed.CreatedAt)
		require.True(t, renamed.UpdatedAt.After(ws.UpdatedAt), "updated_at moves on a rename")
		got, _ := get(t, u, b, ws.ID)
		require.Equal(t, renamed.raw, got.raw)
		// The old name is free again.
		create(t, u, b, `{"name":"old"}`)

		events := b.audit(t, ws.ID)
		require.Len(t, events, 2)
		require.Equal(t, "RENAME_WORKSPACE", events[1].Type)
		require.Equal(t, map[string]any{
			"workspace_id": ws.ID, "old_workspace_name": "old", "new_workspace_name": "new",
		}, events[1].Metadata)
	})

	t.Run("OKSameNameAudited", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		ws := create(t, u, b, `{"name":"same"}`)

		env := ok(t, do(t, http.MethodPut, u+"/v1/workspaces/"+ws.ID+"/name?name=same", ""))

		require.Equal(t, "same", decodeWorkspace(t, env.Workspace, b.app).Name)
		events := b.audit(t, ws.ID)
		require.Equal(t, []string{"NEW_WORKSPACE", "RENAME_WORKSPACE"}, b.auditTypes(t, ws.ID))
		require.Equal(t, map[string]any{
			"workspace_id": ws.ID, "old_workspace_name": "same", "new_workspace_name": "same",
		}, events[1].Metadata)
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		ws := create(t, u, b, `{"name":"mine"}`)
		create(t, u, b, `{"name":"theirs"}`)
		before := b.snapshot(t, "workspaces")

		e := fails(t, do(t, http.MethodPut, u+"/v1/workspaces/"+ws.ID+"/name?name=theirs", ""),
			http.StatusConflict, "name_taken")

		require.Equal(t, "Failed to update workspace "+ws.ID+" name to 'theirs'", e.Message)
		require.Equal(t, "a workspace named 'theirs' already exists", e.Detail)
		require.Equal(t, before, b.snapshot(t, "workspaces"))
		require.Equal(t, []string{"NEW_WORKSPACE"}, b.auditTypes(t, ws.ID), "a refused rename is not audited")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		u, _ := setup(t, rest.Config{})
		id := uuid.NewString()

		e := fails(t, do(t, http.MethodPut, u+"/v1/workspaces/"+id+"/name?name=x", ""),
			http.StatusNotFound, "workspace_not_found")

		require.Equal(t, "Failed to update workspace "+id+" name to 'x'", e.Message)
	})
}

func TestDescribeWorkspace(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	ws := create(t, u, b, `{"name":"described"}`)
	path := u + "/v1/workspaces/" + ws.ID + "/description"
	last := ws

	put := func(t *testing.T, body string) *workspace {
		t.Helper()
		got := decodeWorkspace(t, ok(t, do(t, http.MethodPut, path, body)).Workspace, b.app)
		read, _ := get(t, u, b, ws.ID)
		require.Equal(t, got.raw, read.raw)
		require.Equal(t, ws.Name, got.Name)
		require.True(t, got.UpdatedAt.After(last.UpdatedAt), "updated_at moves on every edit")
		last = got
		return got
	}

	t.Run("OKSet", func(t *testing.T) {
		got := put(t, `{"description":"hello, world"}`)
		require.Equal(t, "hello, world", *got.Description)
	})
	t.Run("OKEmptyKept", func(t *testing.T) {
		got := put(t, `{"description":""}`)
		require.JSONEq(t, `""`, string(got.raw["description"]))
	})
	t.Run("OKNullClears", func(t *testing.T) {
		put(t, `{"description":"x"}`)
		got := put(t, `{"description":null}`)
		require.NotContains(t, got.raw, "description")
	})
	t.Run("OKAbsentKeyClears", func(t *testing.T) {
		put(t, `{"description":"x"}`)
		got := put(t, `{"other":1}`)
		require.NotContains(t, got.raw, "description")
	})
	t.Run("OKMaxLength", func(t *testing.T) {
		long := string(make([]byte, 0, 4096))
		for len(long) < 4096 {
			long += "é" // two bytes: the limit counts bytes
		}
		got := put(t, string(mustJSON(t, map[string]string{"description": long})))
		require.Equal(t, long, *got.Description)
	})
	t.Run("OKNotAudited", func(t *testing.T) {
		require.Equal(t, []string{"NEW_WORKSPACE"}, b.auditTypes(t, ws.ID))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		id := uuid.NewString()
		e := fails(t, do(t, http.MethodPut, u+"/v1/workspaces/"+id+"/description", `{"description":"x"}`),
			http.StatusNotFound, "workspace_not_found")
		require.Equal(t, "Failed to update workspace "+id+" description", e.Message)
	})
}

func TestSetVolumeMetadata(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	ws := create(t, u, b, `{"name":"hinted"}`)
	path := u + "/v1/workspaces/" + ws.ID + "/volume-metadata"

	put := func(t *testing.T, body string) *workspace {
		t.Helper()
		got := decodeWorkspace(t, ok(t, do(t, http.MethodPut, path, body)).Workspace, b.app)
		read, _ := get(t, u, b, ws.ID)
		require.Equal(t, got.raw, read.raw)
		return got
	}

	t.Run("OKSet", func(t *testing.T) {
		got := put(t, `{"volume_metadata":{"size_bytes":4096}}`)
		require.JSONEq(t, `{"size_bytes":4096}`, string(got.raw["volume_metadata"]))
		require.True(t, got.UpdatedAt.After(ws.UpdatedAt))
	})
	t.Run("OKEmptyObjectKept", func(t *testing.T) {
		got := put(t, `{"volume_metadata":{}}`)
		require.JSONEq(t, `{}`, string(got.raw["volume_metadata"]))
	})
	t.Run("OKNullClears", func(t *testing.T) {
		put(t, `{"volume_metadata":{"size_bytes":1}}`)
		got := put(t, `{"volume_metadata":null}`)
		require.NotContains(t, got.raw, "volume_metadata")
	})
	t.Run("OKAbsentKeyClears", func(t *testing.T) {
		put(t, `{"volume_metadata":{"size_bytes":1}}`)
		got := put(t, `{}`)
		require.NotContains(t, got.raw, "volume_metadata")
	})
	t.Run("OKNotAudited", func(t *testing.T) {
		require.Equal(t, []string{"NEW_WORKSPACE"}, b.auditTypes(t, ws.ID))
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		id := uuid.NewString()
		e := fails(t, do(t, http.MethodPut, u+"/v1/workspaces/"+id+"/volume-metadata", `{"volume_metadata":null}`),
			http.StatusNotFound, "workspace_not_found")
		require.Equal(t, "Failed to update workspace "+id+" volume metadata", e.Message)
	})
}

func TestDeleteWorkspace(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		ws := create(t, u, b, `{"name":"doomed"}`)
		other := create(t, u, b, `{"name":"kept"}`)
		// An artifact row cascades, and its object key is released for the
		// reaper.
		b.exec(t, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size,
			content_written_at, created_at, updated_at)
			VALUES ('01JTESTARTIFACT0000000000A', $1, 'a', 'store/'||$1||'/01JTESTARTIFACT0000000000A',
			        'text/plain', 1, now(), now(), now())`, ws.ID)

		bare(t, do(t, http.MethodDelete, u+"/v1/workspaces/"+ws.ID, ""))

		fails(t, do(t, http.MethodGet, u+"/v1/workspaces/"+ws.ID, ""), http.StatusNotFound, "workspace_not_found")
		require.Equal(t, 0, b.count(t, "artifacts"))
		var key, wsID string
		require.NoError(t, b.db.QueryRow(t.Context(),
			`SELECT object_key, workspace_id FROM released_objects`).Scan(&key, &wsID))
		require.Equal(t, "store/"+ws.ID+"/01JTESTARTIFACT0000000000A", key)
		require.Equal(t, ws.ID, wsID)
		get(t, u, b, other.ID)

		events := b.audit(t, ws.ID)
		require.Equal(t, []string{"NEW_WORKSPACE", "DELETE_WORKSPACE"}, b.auditTypes(t, ws.ID))
		require.Equal(t, map[string]any{"workspace_id": ws.ID, "workspace_name": "doomed"}, events[1].Metadata)
		// The name is free again.
		create(t, u, b, `{"name":"doomed"}`)
	})

	t.Run("ErrNotFoundOnceDeleted", func(t *testing.T) {
		t.Parallel()
		u, b := setup(t, rest.Config{})
		ws := create(t, u, b, `{"name":"twice"}`)
		bare(t, do(t, http.MethodDelete, u+"/v1/workspaces/"+ws.ID, ""))
		events := b.count(t, "audit_system_events")

		e := fails(t, do(t, http.MethodDelete, u+"/v1/workspaces/"+ws.ID, ""), http.StatusNotFound, "workspace_not_found")

		require.Equal(t, "Failed to delete workspace "+ws.ID, e.Message)
		require.Equal(t, "workspace '"+ws.ID+"' does not exist", e.Detail)
		require.Equal(t, events, b.count(t, "audit_system_events"))
	})
}

// TestUnknownWorkspace sends every {workspaceID} route an ID that has no
// row, well-formed or not: each answers 404 workspace_not_found and
// changes nothing.
func TestUnknownWorkspace(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	create(t, u, b, `{"name":"bystander"}`)
	rows, events := b.snapshot(t, "workspaces"), b.count(t, "audit_system_events")

	for kind, id := range map[string]string{"UUID": uuid.NewString(), "Malformed": "not-a-uuid", "Space": "%20"} {
		shown, err := url.PathUnescape(id)
		require.NoError(t, err)
		for _, tc := range []struct {
			method, path, body, message string
		}{
			{http.MethodGet, "", "", "Failed to fetch workspace %s"},
			{http.MethodDelete, "", "", "Failed to delete workspace %s"},
			{http.MethodPut, "/name?name=x", "", "Failed to update workspace %s name to 'x'"},
			{http.MethodPut, "/description", `{"description":"x"}`, "Failed to update workspace %s description"},
			{http.MethodPut, "/volume-metadata", `{"volume_metadata":{"size_bytes":1}}`, "Failed to update workspace %s volume metadata"},
			{http.MethodPost, "/volume", "", "Failed to fetch workspace %s"},
			{http.MethodDelete, "/volume", "", "Failed to fetch workspace %s"},
		} {
			t.Run("ErrNotFound/"+kind+"/"+tc.method+tc.path, func(t *testing.T) {
				e := fails(t, do(t, tc.method, u+"/v1/workspaces/"+id+tc.path, tc.body),
					http.StatusNotFound, "workspace_not_found")
				require.Equal(t, sprintf(tc.message, shown), e.Message)
				require.Equal(t, "workspace '"+shown+"' does not exist", e.Detail)
			})
		}
	}

	// Decoding and validation come before the lookup.
	id := uuid.NewString()
	for _, tc := range []struct {
		method, path, body, reason string
	}{
		{http.MethodPut, "/name", "", "invalid_query"},
		{http.MethodPut, "/name?name=a.b", "", "invalid_name"},
		{http.MethodPut, "/description", `{"description":1}`, "invalid_json"},
		{http.MethodPut, "/description", `{"description":"` + strings.Repeat("x", 4097) + `"}`, "invalid_parameters"},
		{http.MethodPut, "/volume-metadata", ``, "invalid_json"},
		{http.MethodPut, "/volume-metadata", `{"volume_metadata":{"size_bytes":0}}`, "invalid_parameters"},
	} {
		t.Run("ErrValidatedBeforeLookup/"+tc.method+tc.path, func(t *testing.T) {
			fails(t, do(t, tc.method, u+"/v1/workspaces/"+id+tc.path, tc.body), http.StatusBadRequest, tc.reason)
		})
	}

	require.Equal(t, rows, b.snapshot(t, "workspaces"))
	require.Equal(t, events, b.count(t, "audit_system_events"))
}
