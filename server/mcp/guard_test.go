package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/mcp"
	"github.com/cairn-dev/cairn/server/rest"
)

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// TestGuardHost drives the DNS-rebinding guard over a real loopback
// connection: a foreign Host is refused with the REST envelope; loopback
// names are served; with the guard off everything is served.
func TestGuardHost(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	guarded := serve(t, mcp.New(h.svc, mcp.Config{DNSRebindGuard: true}))
	open := serve(t, mcp.New(h.svc, mcp.Config{DNSRebindGuard: false}))

	t.Run("ErrHostNotAllowed", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, guarded, strings.NewReader(toolsList))
		require.NoError(t, err)
		req.Host = "evil.example"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", "agent-42")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.Equal(t, "agent-42", resp.Header.Get("X-Request-ID"))
		require.JSONEq(t, `{"success":false,"request_id":"agent-42","error":{"code":403,`+
			`"message":"Forbidden: invalid Host header \"evil.example\"","reason":"host_not_allowed"}}`, string(body))
	})

	t.Run("ErrHostNotAllowedWithPort", func(t *testing.T) {
		status, body := post(t, guarded, toolsList, "Host", "localhost.evil.example:8080")
		require.Equal(t, http.StatusForbidden, status)
		var env struct {
			Success   bool   `json:"success"`
			RequestID string `json:"request_id"`
			Error     struct {
				Message string `json:"message"`
				Reason  string `json:"reason"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &env))
		require.False(t, env.Success)
		require.Len(t, env.RequestID, 36, "a fresh UUID without a client request ID")
		require.Equal(t, "host_not_allowed", env.Error.Reason)
		require.Equal(t, `Forbidden: invalid Host header "localhost.evil.example:8080"`, env.Error.Message)
	})

	for _, host := range []string{"localhost", "LOCALHOST:44123", "tools.localhost:1", "127.0.0.1", "127.8.9.10:80", "[::1]:44123", "[::1]"} {
		t.Run("OK"+host, func(t *testing.T) {
			status, body := post(t, guarded, toolsList, "Host", host)
			require.Equal(t, http.StatusOK, status, "body: %s", body)
		})
	}

	t.Run("OKGuardOff", func(t *testing.T) {
		status, body := post(t, open, toolsList, "Host", "evil.example")
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		require.Contains(t, string(body), "get_workspace")
	})
}

// TestGuardHostLocalAddress checks that the key is the connection's local
// address: only loopback connections are guarded.
func TestGuardHostLocalAddress(t *testing.T) {
	t.Parallel()
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	guard := mcp.GuardHost(next, "X-Request-ID")
	for _, tc := range []struct {
		name  string
		local net.Addr
		host  string
		want  int
	}{
		{"ErrLoopbackV4", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, "evil.example", http.StatusForbidden},
		{"ErrLoopbackV6", &net.TCPAddr{IP: net.ParseIP("::1"), Port: 1}, "evil.example", http.StatusForbidden},
		{"ErrLoopbackMapped", &net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 1}, "10.0.0.1", http.StatusForbidden},
		{"ErrEmptyHost", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, "", http.StatusForbidden},
		{"OKOtherInterface", &net.TCPAddr{IP: net.ParseIP("10.0.0.7"), Port: 1}, "evil.example", http.StatusTeapot},
		{"OKNoLocalAddress", nil, "evil.example", http.StatusTeapot},
		{"OKLoopbackHost", &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, "localhost.", http.StatusTeapot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(http.MethodPost, "/v1/mcp", nil)
			if tc.local != nil {
				req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, tc.local))
			}
			req.Host = tc.host
			rec := httptest.NewRecorder()
			guard.ServeHTTP(rec, req)
			require.Equal(t, tc.want, rec.Code)
		})
	}
}

// TestMount checks the routing beside REST: the endpoint exists under the
// prefix only when enabled; every other path keeps REST's behaviour.
func TestMount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	api := rest.New(h.svc, rest.Config{PathPrefix: "/api"}).Handler()
	enabled := serve(t, mcp.Mount(api, h.svc, mcp.Config{Enable: true, PathPrefix: "/api/"}))
	disabled := serve(t, mcp.Mount(api, h.svc, mcp.Config{Enable: false, PathPrefix: "/api"}))
	root := serve(t, mcp.Mount(rest.New(h.svc, rest.Config{}).Handler(), h.svc, mcp.Config{Enable: true, PathPrefix: "/"}))

	send := func(t *testing.T, method, url, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	t.Run("OKEnabled", func(t *testing.T) {
		status, body := post(t, enabled+"/api/v1/mcp", toolsList)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		status, body = post(t, root+"/v1/mcp", toolsList)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
	})

	t.Run("ErrNotFoundWhenDisabled", func(t *testing.T) {
		status, body := send(t, http.MethodPost, disabled+"/api/v1/mcp", toolsList)
		require.Equal(t, http.StatusNotFound, status)
		require.Equal(t, "404 page not found\n", body)
	})

	t.Run("OKRESTUntouched", func(t *testing.T) {
		for _, url := range []string{enabled, disabled} {
			status, body := send(t, http.MethodGet, url+"/api/v1/workspaces", "")
			require.Equal(t, http.StatusOK, status, "body: %s", body)
			status, _ = send(t, http.MethodDelete, url+"/api/v1/workspaces", "")
			require.Equal(t, http.StatusMethodNotAllowed, status)
			status, _ = send(t, http.MethodGet, url+"/api/v1/nope", "")
			require.Equal(t, http.StatusNotFound, status)
		}
	})

	t.Run("ErrOtherPaths", func(t *testing.T) {
		status, _ := send(t, http.MethodPost, enabled+"/v1/mcp", toolsList)
		require.Equal(t, http.StatusNotFound, status, "the prefix applies")
		status, _ = send(t, http.MethodPost, enabled+"/api/v1/mcp/", toolsList)
		require.Equal(t, http.StatusNotFound, status, "no trailing slash")
		status, _ = send(t, http.MethodPost, enabled+"/api/v1//mcp", toolsList)
		require.Equal(t, http.StatusMovedPermanently, status, "REST cleans the path")
	})
}

// noRedirect reports redirects instead of following them.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}
