package mcp_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/mcp"
)

// workspaceOut is a workspace as the read tools return it, with the keys as
// sent.
type workspaceOut struct {
	Name           string               `json:"name"`
	VolumeState    string               `json:"volume_state"`
	ArtifactCounts cairn.ArtifactCounts `json:"artifact_counts"`
	CreatedAt      time.Time            `json:"created_at"`
}

func TestGetWorkspace(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "ws-1", false)
	h.artifact(t, ws, "kept", "body", nil)
	c := connect(t, h.url, "")

	t.Run("OK", func(t *testing.T) {
		res := call(t, c, "get_workspace", map[string]any{"workspace_name": "ws-1"})
		var raw struct {
			Workspace map[string]json.RawMessage `json:"workspace"`
		}
		structured(t, res, &raw)
		require.ElementsMatch(t, []string{"name", "volume_state", "artifact_counts", "created_at"}, keysOf(raw.Workspace),
			"no ID, no mount count")
		var out struct{ Workspace workspaceOut }
		structured(t, res, &out)
		require.Equal(t, workspaceOut{Name: "ws-1", VolumeState: "NONE", ArtifactCounts: cairn.ArtifactCounts{Recorded: 1},
			CreatedAt: ws.CreatedAt}, out.Workspace)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		msg := fails(t, call(t, c, "get_workspace", map[string]any{"workspace_name": "WS-1"}), "workspace_not_found")
		require.Equal(t, "workspace_not_found: workspace 'WS-1' does not exist", msg, "names are case-sensitive")
	})
}

func TestListWorkspaces(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	a := h.workspace(t, "a", false)
	b := h.workspace(t, "b", false)
	h.workspace(t, "c", false)
	h.exec(t, "UPDATE workspaces SET volume_state = 'READY' WHERE id = $1", b.ID)
	c := connect(t, h.url, "")

	list := func(t *testing.T, args map[string]any) []string {
		t.Helper()
		var out struct{ Workspaces []workspaceOut }
		structured(t, call(t, c, "list_workspaces", args), &out)
		require.NotNil(t, out.Workspaces, "always an array")
		names := []string{}
		for _, ws := range out.Workspaces {
			names = append(names, ws.Name)
		}
		return names
	}

	t.Run("OKAllInCreationOrder", func(t *testing.T) {
		var out struct{ Workspaces []workspaceOut }
		structured(t, call(t, c, "list_workspaces", nil), &out)
		require.Equal(t, []workspaceOut{
			{Name: "a", VolumeState: "NONE", CreatedAt: a.CreatedAt},
			{Name: "b", VolumeState: "READY", CreatedAt: b.CreatedAt},
			{Name: "c", VolumeState: "NONE", CreatedAt: out.Workspaces[2].CreatedAt},
		}, out.Workspaces)
	})

	t.Run("OKFilters", func(t *testing.T) {
		require.Equal(t, []string{"a", "c"}, list(t, map[string]any{"workspace_names": []string{"c", "a", "zz"}}))
		require.Equal(t, []string{"b"}, list(t, map[string]any{"volume_states": []string{"READY"}}))
		require.Equal(t, []string{"a", "b", "c"}, list(t, map[string]any{"volume_states": []string{"NONE", "READY"}}))
		require.Equal(t, []string{"c"}, list(t, map[string]any{"workspace_names": []string{"b", "c"}, "volume_states": []string{"NONE"}}))
	})

	t.Run("OKPaging", func(t *testing.T) {
		require.Equal(t, []string{"b"}, list(t, map[string]any{"limit": 1, "offset": 1}))
		require.Equal(t, []string{"b", "c"}, list(t, map[string]any{"offset": 1}))
		require.Equal(t, []string{}, list(t, map[string]any{"offset": 3}))
	})

	t.Run("OKEmptyIsArray", func(t *testing.T) {
		res := call(t, c, "list_workspaces", map[string]any{"workspace_names": []string{"nothing"}})
		require.Equal(t, `{"workspaces":[]}`, ok(t, res))
		require.JSONEq(t, `{"workspaces":[]}`, string(mustJSON(res.StructuredContent)))
	})

	t.Run("ErrListTooLarge", func(t *testing.T) {
		h.exec(t, `INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
			SELECT 'bulk-' || g, 'bulk-' || g, 'bulk-' || g, now(), now() FROM generate_series(1, 10001) g`)
		msg := fails(t, call(t, c, "list_workspaces", nil), "list_too_large")
		require.Equal(t, "list_too_large: more than 10000 rows match; page with 'limit' (at most 1000) and 'offset'", msg)
		require.Len(t, list(t, map[string]any{"limit": 1000, "offset": 9000}), 1000)
	})
}

func keysOf(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
