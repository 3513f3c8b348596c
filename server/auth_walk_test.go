package server_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/server/route"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestEveryRouteNeedsItsScope walks the whole route table against a real
// server with tokens: no token → 401, a token lacking the route's scope →
// 403, a token with it → neither. Tokens never show in logs or bodies.
func TestEveryRouteNeedsItsScope(t *testing.T) {
	cfg, secrets := testConfig(t)
	store := stacktest.S3(t)

	all := []route.Scope{route.Read, route.Write, route.Admin, route.Shell, route.MCP}
	secret := func(name string) string { return "secret-" + name + "-0123456789abcdef" }
	tokens := map[route.Scope]string{}
	add := func(name string, scopes []route.Scope) {
		sum := sha256.Sum256([]byte(secret(name)))
		var names []string
		for _, s := range scopes {
			names = append(names, string(s))
		}
		cfg.Auth.Tokens = append(cfg.Auth.Tokens, server.TokenConfig{Name: name, SHA256: hex.EncodeToString(sum[:]), Scopes: names})
	}
	add("all", all)
	for _, missing := range all {
		var rest []route.Scope
		for _, s := range all {
			if s != missing {
				rest = append(rest, s)
			}
		}
		add("no-"+string(missing), rest)
		tokens[missing] = secret("no-" + string(missing))
	}
	require.NoError(t, cfg.Validate())

	logs := &lockedBuffer{}
	srv := startServer(t, cfg, secrets, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	ctx := t.Context()
	base := "http://" + srv.APIAddr()
	listed, err := store.Client().ListObjectsV2(ctx, &awss3.ListObjectsV2Input{Bucket: &cfg.Artifact.Store.Bucket})
	require.NoError(t, err)
	var keys []string
	for _, o := range listed.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	require.Equal(t, []string{"snapshots/", "staging/", "store/"}, keys, "the server pins its key prefixes at start")

	send := func(pattern, token string) (int, string) {
		method, path, _ := strings.Cut(pattern, " ")
		path = strings.NewReplacer("{workspaceID}", "00000000-0000-4000-8000-000000000000",
			"{artifactID}", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "{shellID}", "nope").Replace(path)
		body := io.Reader(nil)
		if method == http.MethodPost || method == http.MethodPut {
			body = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		}
		req, err := http.NewRequest(method, base+path, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// The walk goes over the routes the listener actually serves.
	mounted := map[string]route.Scope{}
	for _, rt := range srv.Routes() {
		pattern := rt.String()
		if rt.Method == "" {
			pattern = "POST " + rt.Path // the MCP endpoint answers every method
		}
		mounted[pattern] = rt.Scope
		if rt.Scope == route.Public {
			status, _ := send(pattern, "")
			require.NotEqual(t, http.StatusUnauthorized, status, "%s needs no token", pattern)
			continue
		}
		status, body := send(pattern, "")
		require.Equal(t, http.StatusUnauthorized, status, "%s without a token: %s", pattern, body)
		require.Contains(t, body, `"reason":"unauthenticated"`)

		if rt.Scope == route.Any {
			status, body = send(pattern, tokens[route.Read]) // a token lacking a scope is still a valid token
			require.Equal(t, http.StatusOK, status, "%s with any valid token: %s", pattern, body)
			continue
		}
		status, body = send(pattern, tokens[rt.Scope])
		require.Equal(t, http.StatusForbidden, status, "%s without scope %s: %s", pattern, rt.Scope, body)
		require.Contains(t, body, `"reason":"forbidden"`)
		require.NotContains(t, body, tokens[rt.Scope])

		status, body = send(pattern, secret("all"))
		require.NotContains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, status,
			"%s with scope %s: %s", pattern, rt.Scope, body)
	}
	// Where the coarse rules (read for a GET, write for a create, rename,
	// describe or delete) would say otherwise, the specific scope wins.
	for pattern, scope := range map[string]route.Scope{
		"GET /liveness/ready":                        route.Public,
		"GET /v1/info":                               route.Any,
		"GET /v1/workspaces":                         route.Read,
		"DELETE /v1/workspaces/{workspaceID}":        route.Admin,
		"POST /v1/workspaces/{workspaceID}/volume":   route.Admin,
		"DELETE /v1/workspaces/{workspaceID}/volume": route.Admin,
		"GET /v1/audit":                              route.Admin,
		"POST /v1/maintenance/sweep":                 route.Admin,
		"DELETE /v1/artifacts/{artifactID}":          route.Write,
		"POST /v1/mcp":                               route.MCP,
	} {
		require.Equal(t, scope, mounted[pattern], pattern)
	}

	// The guards come before authentication, on REST and MCP alike.
	for _, pattern := range []string{"GET /v1/workspaces", "POST /v1/mcp"} {
		method, path, _ := strings.Cut(pattern, " ")
		req, err := http.NewRequest(method, base+path, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+secret("all"))
		req.Header.Set("Origin", "https://evil.example")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s from another origin", pattern)
		require.Contains(t, string(b), `"reason":"origin_not_allowed"`)

		req, err = http.NewRequest(method, base+path, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+secret("all"))
		req.Host = "evil.example"
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s with a rebound Host on loopback", pattern)
		require.Contains(t, string(b), `"reason":"host_not_allowed"`)
	}

	var errBody struct {
		Error struct{ Message string } `json:"error"`
	}
	_, body := send("GET /v1/workspaces", tokens[route.Read])
	require.NoError(t, json.Unmarshal([]byte(body), &errBody))
	require.Equal(t, "Token 'no-read' lacks scope 'read'", errBody.Error.Message)

	require.Contains(t, logs.String(), "/v1/workspaces", "the requests were logged at debug level")
	for _, s := range all {
		require.NotContains(t, logs.String(), tokens[s], "a token was logged")
	}
	require.NotContains(t, logs.String(), secret("all"))
}
