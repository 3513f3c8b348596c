package mcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/mcp"
)

// artifactOut is an artifact as list_artifacts returns it.
type artifactOut struct {
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	State       string    `json:"state"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// listArtifacts lists through the tool and returns the items.
func listArtifacts(t *testing.T, c *client.Client, args map[string]any) []artifactOut {
	t.Helper()
	var out struct{ Artifacts []artifactOut }
	structured(t, call(t, c, "list_artifacts", args), &out)
	require.NotNil(t, out.Artifacts, "always an array")
	return out.Artifacts
}

func names(list []artifactOut) []string {
	out := []string{}
	for _, a := range list {
		out = append(out, a.Name)
	}
	return out
}

func TestListArtifacts(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "ws", false)
	first := "first one"
	a1 := h.artifact(t, ws, "a1", "one", &first)
	h.artifact(t, ws, "a2", "two", nil)
	a3 := h.artifact(t, ws, "a3", "three", nil)
	h.exec(t, "UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1", a3.ID)
	h.workspace(t, "empty", false)
	c := connect(t, h.url, "")

	t.Run("OKRecordedByDefault", func(t *testing.T) {
		res := call(t, c, "list_artifacts", map[string]any{"workspace_name": "ws"})
		var raw struct {
			Artifacts []map[string]json.RawMessage `json:"artifacts"`
		}
		structured(t, res, &raw)
		require.Len(t, raw.Artifacts, 2)
		require.ElementsMatch(t, []string{"name", "description", "state", "updated_at"}, keysOf(raw.Artifacts[0]))
		require.Equal(t, "null", string(raw.Artifacts[1]["description"]), "an unset description is null, not omitted")

		list := listArtifacts(t, c, map[string]any{"workspace_name": "ws", "states": nil})
		require.Equal(t, []artifactOut{
			{Name: "a1", Description: &first, State: "RECORDED", UpdatedAt: a1.UpdatedAt},
			{Name: "a2", State: "RECORDED", UpdatedAt: list[1].UpdatedAt},
		}, list)
	})

	t.Run("OKStates", func(t *testing.T) {
		require.Equal(t, []string{"a1", "a2", "a3"}, names(listArtifacts(t, c, map[string]any{
			"workspace_name": "ws", "states": []string{"MISSING_OBJECT", "RECORDED"}})))
		list := listArtifacts(t, c, map[string]any{"workspace_name": "ws", "states": []string{"MISSING_OBJECT"}})
		require.Equal(t, []string{"a3"}, names(list))
		require.Equal(t, "MISSING_OBJECT", list[0].State)
	})

	t.Run("OKNamesAndPaging", func(t *testing.T) {
		require.Equal(t, []string{"a2"}, names(listArtifacts(t, c, map[string]any{
			"workspace_name": "ws", "artifact_names": []string{"a2", "a3", "nope"}})))
		require.Equal(t, []string{"a2"}, names(listArtifacts(t, c, map[string]any{
			"workspace_name": "ws", "limit": 1, "offset": 1})))
	})

	t.Run("OKEmptyIsArray", func(t *testing.T) {
		require.Equal(t, `{"artifacts":[]}`, ok(t, call(t, c, "list_artifacts", map[string]any{"workspace_name": "empty"})))
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		msg := fails(t, call(t, c, "list_artifacts", map[string]any{"workspace_name": "nope"}), "workspace_not_found")
		require.Equal(t, "workspace_not_found: workspace 'nope' does not exist", msg)
	})

	t.Run("ErrListTooLarge", func(t *testing.T) {
		bulk := h.workspace(t, "bulk", false)
		h.exec(t, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, created_at, updated_at, content_written_at)
			SELECT 'bulk-' || g, $1, 'bulk-' || g, 'k-' || g, 'text/plain', 1, now(), now(), now()
			FROM generate_series(1, 10001) g`, bulk.ID)
		msg := fails(t, call(t, c, "list_artifacts", map[string]any{"workspace_name": "bulk"}), "list_too_large")
		require.Equal(t, "list_too_large: more than 10000 rows match; page with 'limit' (at most 1000) and 'offset'", msg)
		require.Len(t, listArtifacts(t, c, map[string]any{"workspace_name": "bulk", "limit": 1000}), 1000)
	})
}

func TestRenameArtifact(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "ws", false)
	desc := "kept"
	h.artifact(t, ws, "old", "body", &desc)
	h.artifact(t, ws, "taken", "body", nil)
	lost := h.artifact(t, ws, "lost", "body", nil)
	h.exec(t, "UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1", lost.ID)
	c := connect(t, h.url, "")
	rename := func(from, to string) map[string]any {
		return map[string]any{"workspace_name": "ws", "artifact_name": from, "new_name": to}
	}

	t.Run("OK", func(t *testing.T) {
		msg := ok(t, call(t, c, "rename_artifact", rename("old", "new")))
		require.Equal(t, "artifact 'old' of workspace 'ws' renamed to 'new'", msg)
		list := listArtifacts(t, c, map[string]any{"workspace_name": "ws", "artifact_names": []string{"old", "new"}})
		require.Equal(t, []string{"new"}, names(list))
		require.Equal(t, &desc, list[0].Description, "the description is untouched")
	})

	t.Run("OKSameName", func(t *testing.T) {
		ok(t, call(t, c, "rename_artifact", rename("new", "new")))
	})

	t.Run("OKMissingObject", func(t *testing.T) {
		ok(t, call(t, c, "rename_artifact", rename("lost", "found")))
		list := listArtifacts(t, c, map[string]any{"workspace_name": "ws", "states": []string{"MISSING_OBJECT"}})
		require.Equal(t, []string{"found"}, names(list))
	})

	t.Run("ErrNameTaken", func(t *testing.T) {
		msg := fails(t, call(t, c, "rename_artifact", rename("new", "taken")), "name_taken")
		require.Equal(t, "name_taken: workspace "+ws.ID+" already has an artifact named 'taken'", msg)
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		msg := fails(t, call(t, c, "rename_artifact", rename("old", "other")), "artifact_not_found")
		require.Equal(t, "artifact_not_found: workspace 'ws' has no artifact named 'old'", msg)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		msg := fails(t, call(t, c, "rename_artifact", map[string]any{"workspace_name": "nope", "artifact_name": "new", "new_name": "x"}),
			"workspace_not_found")
		require.Equal(t, "workspace_not_found: workspace 'nope' does not exist", msg)
	})
}

func TestDeleteArtifact(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "ws", false)
	other := h.workspace(t, "other", false)
	art := h.artifact(t, ws, "doomed", "body", nil)
	lost := h.artifact(t, ws, "lost", "body", nil)
	h.exec(t, "UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1", lost.ID)
	h.artifact(t, other, "elsewhere", "body", nil)
	c := connect(t, h.url, "")
	del := func(wsName, name string) map[string]any {
		return map[string]any{"workspace_name": wsName, "artifact_name": name}
	}

	t.Run("OK", func(t *testing.T) {
		msg := ok(t, call(t, c, "delete_artifact", del("ws", "doomed")))
		require.Equal(t, "artifact 'doomed' deleted from workspace 'ws'", msg)
		require.Empty(t, listArtifacts(t, c, map[string]any{"workspace_name": "ws", "artifact_names": []string{"doomed"}}))
		var released int
		require.NoError(t, h.db.QueryRow(t.Context(),
			"SELECT count(*) FROM released_objects WHERE object_key = $1", art.ObjectKey).Scan(&released))
		require.Equal(t, 1, released, "the content is reclaimed later, not now")
		h.artifact(t, ws, "doomed", "again", nil) // the name is free at once
	})

	t.Run("OKMissingObject", func(t *testing.T) {
		ok(t, call(t, c, "delete_artifact", del("ws", "lost")))
	})

	t.Run("ErrArtifactNotFound", func(t *testing.T) {
		msg := fails(t, call(t, c, "delete_artifact", del("ws", "lost")), "artifact_not_found")
		require.Equal(t, "artifact_not_found: workspace 'ws' has no artifact named 'lost'", msg,
			"unlike REST's delete by ID, an unknown name is an error")
	})

	t.Run("ErrOtherWorkspacesArtifact", func(t *testing.T) {
		msg := fails(t, call(t, c, "delete_artifact", del("ws", "elsewhere")), "artifact_not_found")
		require.Equal(t, "artifact_not_found: workspace 'ws' has no artifact named 'elsewhere'", msg)
		list, err := h.svc.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: other.ID})
		require.NoError(t, err)
		require.Len(t, list, 1)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		msg := fails(t, call(t, c, "delete_artifact", del("nope", "doomed")), "workspace_not_found")
		require.Equal(t, "workspace_not_found: workspace 'nope' does not exist", msg)
	})
}
