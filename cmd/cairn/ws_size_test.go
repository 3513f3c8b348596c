package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// createRecorder answers POST /v1/workspaces with a workspace and keeps the
// bodies it was sent.
type createRecorder struct {
	mu     sync.Mutex
	bodies []map[string]any
}

func (c *createRecorder) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/workspaces" {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	c.bodies = append(c.bodies, body)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	ws := map[string]any{"id": fakeWorkspaceID, "name": body["name"], "volume_name": "cairn-" + fakeWorkspaceID,
		"volume_state": "NONE", "artifact_counts": map[string]int{}, "created_at": fakeTime, "updated_at": fakeTime}
	if m, ok := body["volume_metadata"]; ok {
		ws["volume_metadata"] = m
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"workspace": ws})
}

func TestWorkspaceCreateSize(t *testing.T) {
	t.Setenv("CAIRN_TOKEN", "tok")
	rec := &createRecorder{}
	srv := httptest.NewServer(http.HandlerFunc(rec.serve))
	t.Cleanup(srv.Close)
	create := func(args ...string) fsRun {
		return runCLI(t, append([]string{"ws", "create", "--server", srv.URL}, args...)...)
	}

	for flag, want := range map[string]float64{"10Gi": 10 << 30, "1073741824": 1 << 30, "500M": 500e6} {
		rec.bodies = nil
		r := create("sized", "--size", flag)
		require.Equal(t, 0, r.code, "--size %s: %s", flag, r.stderr)
		require.Equal(t, []map[string]any{{"name": "sized", "volume_metadata": map[string]any{"size_bytes": want}}}, rec.bodies,
			"--size %s", flag)
	}

	rec.bodies = nil
	r := create("plain")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, []map[string]any{{"name": "plain"}}, rec.bodies, "no --size, no volume_metadata")

	for _, bad := range []string{"big", "0", "-1Gi", "1.5"} {
		rec.bodies = nil
		r := create("bad", "--size", bad)
		require.Equal(t, 2, r.code, "--size %s is a usage error", bad)
		require.Contains(t, r.stderr, "--size: ")
		require.Empty(t, rec.bodies, "nothing is sent")
	}
}
