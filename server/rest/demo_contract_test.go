package rest_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDemoClientCalls replays, byte for byte, the artifact calls the first
// cairn's demo client makes — the staging sequence S with only
// its two headers, create artifact, R2 over both states, a presigned get,
// update artifact, and a size-omitted empty upload — reading only the
// fields it reads. Register no longer copies; none of this may notice.
func TestDemoClientCalls(t *testing.T) {
	t.Parallel()
	h := setupArtifacts(t, artConfig{})
	ws := h.newWorkspace(t)

	// S: mint with exactly {"size", "sha256_b64"}, then PUT with only
	// Content-Length and x-amz-checksum-sha256.
	stage := func(body []byte, mint string) string {
		t.Helper()
		var out struct {
			Success bool `json:"success"`
			Staging struct {
				Key    string `json:"staging_object_key"`
				PutURL string `json:"put_url"`
			} `json:"staging"`
		}
		r := do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", mint)
		require.NoError(t, json.Unmarshal(r.body, &out), string(r.body))
		require.True(t, out.Success, string(r.body))
		require.NotEmpty(t, out.Staging.PutURL, "a mint without multipart always gets one PUT URL")
		status, resp := put(t, out.Staging.PutURL, body, sha256B64(body))
		require.Less(t, status, 400, resp)
		return out.Staging.Key
	}
	success := func(r *response) map[string]any {
		t.Helper()
		var m map[string]any
		require.NoError(t, json.Unmarshal(r.body, &m), string(r.body))
		require.Less(t, r.status, 400, string(r.body))
		require.Equal(t, true, m["success"], string(r.body))
		return m
	}

	body := []byte("first content\n")
	key := stage(body, sprintf(`{"size": %d, "sha256_b64": "%s"}`, len(body), sha256B64(body)))
	success(do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
		sprintf(`{"staging_object_key": %q, "name": "report", "description": "d"}`, key)))

	// R2: both states, artifacts[0].id.
	m := success(do(t, http.MethodGet, h.url+"/v1/workspaces/"+ws+"/artifacts?name=report&state=RECORDED&state=MISSING_OBJECT", ""))
	arts, _ := m["artifacts"].([]any)
	require.Len(t, arts, 1)
	id, _ := arts[0].(map[string]any)["id"].(string)
	require.NotEmpty(t, id)

	m = success(do(t, http.MethodGet, h.url+"/v1/artifacts/"+id+"?presign=true&ttl=60", ""))
	getURL, _ := m["get_url"].(string)
	status, _, got := fetch(t, getURL)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, body, got)
	u, err := url.Parse(getURL)
	require.NoError(t, err)
	require.Equal(t, "60", u.Query().Get("X-Amz-Expires"))

	// update artifact: S, then PUT content {"staging_object_key"}.
	next := []byte("second content\n")
	key = stage(next, sprintf(`{"size": %d, "sha256_b64": "%s"}`, len(next), sha256B64(next)))
	success(do(t, http.MethodPut, h.url+"/v1/artifacts/"+id+"/content", sprintf(`{"staging_object_key": %q}`, key)))
	m = success(do(t, http.MethodGet, h.url+"/v1/artifacts/"+id+"?presign=true", ""))
	_, _, got = fetch(t, m["get_url"].(string))
	require.Equal(t, next, got)

	// A zero-size upload with the size omitted, the literal empty body.
	key = stage(nil, sprintf(`{"sha256_b64": "%s"}`, sha256B64(nil)))
	success(do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
		sprintf(`{"staging_object_key": %q, "name": "empty"}`, key)))
}
