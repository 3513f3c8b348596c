package stacktest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
)

// CancelMCPCallHalfWay calls tool with args as a 2025-11-25 client with
// raw requests (JSON-RPC ID 77, with a progress token) at callURL, reads
// the call's event stream until more than half of the bytes are reported,
// then sends notifications/cancelled naming the call to cancelURL: the
// same endpoint, or another replica's. Both requests carry token. The
// call's stream must end without a result that succeeded. It returns when
// the cancel was sent.
func CancelMCPCallHalfWay(t *testing.T, callURL, cancelURL, token, tool string, args map[string]any) time.Time {
	t.Helper()
	post := func(ctx context.Context, url string, msg map[string]any) *http.Response {
		msg["jsonrpc"] = "2.0"
		body, err := json.Marshal(msg)
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	call := post(t.Context(), callURL, map[string]any{"id": 77, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args, "_meta": map[string]any{"progressToken": "half-way"}}})
	defer call.Body.Close()
	if call.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(call.Body, 4096))
		t.Fatalf("the call was answered %s: %s", call.Status, body)
	}
	require.Equal(t, "text/event-stream", call.Header.Get("Content-Type"), "a call with a progress token streams")

	var cancelled time.Time
	var last map[string]any
	events := bufio.NewScanner(call.Body)
	for events.Scan() {
		data, ok := strings.CutPrefix(events.Text(), "data: ")
		if !ok {
			continue
		}
		last = nil
		require.NoError(t, json.Unmarshal([]byte(data), &last))
		params, _ := last["params"].(map[string]any)
		if cancelled.IsZero() && last["method"] == "notifications/progress" && params["progress"].(float64) > params["total"].(float64)/2 {
			sent := post(t.Context(), cancelURL, map[string]any{"method": "notifications/cancelled",
				"params": map[string]any{"requestId": 77, "reason": "the agent stopped waiting"}})
			sent.Body.Close()
			require.Equal(t, http.StatusAccepted, sent.StatusCode)
			cancelled = time.Now()
		}
	}
	require.False(t, cancelled.IsZero(), "half of the call's bytes were reported before it ended")
	if result, ok := last["result"].(map[string]any); ok {
		require.Equal(t, true, result["isError"], "a cancelled call does not succeed: %v", result)
	}
	return cancelled
}

// artifactsAndSweep is what RequireCancelLeftNothing asks of cairn
// (client.Client).
type artifactsAndSweep interface {
	FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error)
	Sweep(ctx context.Context, workspaceID string) (*cairn.SweepResult, error)
}

// RequireCancelLeftNothing checks what a transfer into the store of
// workspace wsID, cancelled at cancelled, left: soon no container of app,
// bucket holding the keys it held before, no artifact of the workspace;
// and after a sweep the same keys still. It logs how long the container
// and the object took to go.
func RequireCancelLeftNothing(t *testing.T, api artifactsAndSweep, app, wsID string, store *stack.S3, bucket string,
	before []string, cancelled time.Time) {
	t.Helper()
	docker := Docker(t)
	gone := func() bool {
		list, err := docker.ContainerList(t.Context(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+app))})
		require.NoError(t, err)
		return len(list) == 0
	}
	require.Eventually(t, gone, 10*time.Second, 50*time.Millisecond, "the sidecar is removed")
	t.Logf("the sidecar was gone %s after the cancel", time.Since(cancelled).Round(time.Millisecond))
	require.Eventually(t, func() bool { return slices.Equal(before, ObjectKeys(t, store, bucket)) }, 10*time.Second,
		50*time.Millisecond, "the object of the cancelled transfer is deleted")
	t.Logf("no object of it was left %s after the cancel", time.Since(cancelled).Round(time.Millisecond))
	artifacts, err := api.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: wsID})
	require.NoError(t, err)
	require.Empty(t, artifacts)
	_, err = api.Sweep(t.Context(), "")
	require.NoError(t, err)
	require.Equal(t, before, ObjectKeys(t, store, bucket), "nothing appears after a sweep either")
}
