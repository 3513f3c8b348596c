package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/route"
)

func TestCORS(t *testing.T) {
	t.Parallel()
	g, err := New(Config{AllowedOrigins: []string{"https://ops.example"}})
	require.NoError(t, err)
	h, err := g.Mount("", testRoutes())
	require.NoError(t, err)

	t.Run("OKPreflight", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest(http.MethodOptions, "/v1/workspaces", nil)
		req.Header.Set("Origin", "https://OPS.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusNoContent, rec.Code)
		require.Equal(t, "https://OPS.example", rec.Header().Get("Access-Control-Allow-Origin"))
		require.Contains(t, rec.Header().Get("Access-Control-Allow-Headers"), "Authorization")
		require.Contains(t, rec.Header().Get("Access-Control-Allow-Methods"), "DELETE")
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Private-Network"))
	})
	t.Run("OKSimpleRequest", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
		req.Header.Set("Origin", "https://ops.example")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, "https://ops.example", rec.Header().Get("Access-Control-Allow-Origin"))
		require.Contains(t, rec.Header().Get("Access-Control-Expose-Headers"), "X-Request-ID")
	})
	t.Run("ErrOtherOrigin", func(t *testing.T) {
		t.Parallel()
		req := httptest.NewRequest(http.MethodOptions, "/v1/workspaces", nil)
		req.Header.Set("Origin", "https://evil.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.NotEqual(t, http.StatusNoContent, rec.Code, "no preflight for an unlisted origin")
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))
	})
	t.Run("OffWithoutOrigins", func(t *testing.T) {
		t.Parallel()
		off, err := New(Config{})
		require.NoError(t, err)
		req := httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
		req.Header.Set("Origin", "https://ops.example")
		offHandler, err := off.Mount("", testRoutes())
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		offHandler.ServeHTTP(rec, req)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"))
	})
}

// TestRouteOrigins: a route's own origins (the MCP endpoint's
// api.apis.mcp.allowedOrigins) admit browsers to that route alone, for the
// request and its preflight; a port of "*" is any port of that scheme and
// host, and nothing else.
func TestRouteOrigins(t *testing.T) {
	t.Parallel()
	g, err := New(Config{})
	require.NoError(t, err)
	routes := []route.Route{
		{Path: "/v1/mcp", Scope: route.Public, Handler: ok, Origins: []string{"http://localhost:*", "https://Inspector.example"}},
		{Method: http.MethodGet, Path: "/v1/workspaces", Scope: route.Public, Handler: ok},
	}
	h, err := g.Mount("/api", routes)
	require.NoError(t, err)
	for origin, admitted := range map[string]bool{
		"http://localhost:6274":       true,
		"http://LOCALHOST:80":         true,
		"http://localhost":            true,
		"https://inspector.example":   true,
		"https://localhost:6274":      false, // another scheme
		"http://localhost.evil:6274":  false,
		"http://127.0.0.1:6274":       false,
		"https://inspector.example:1": false,
		"http://localhost:6274/x":     false,
		"null":                        false,
	} {
		for _, preflight := range []bool{false, true} {
			req := httptest.NewRequest(http.MethodPost, "/api/v1/mcp", nil)
			if preflight {
				req = httptest.NewRequest(http.MethodOptions, "/api/v1/mcp", nil)
				req.Header.Set("Access-Control-Request-Method", "POST")
			}
			req.Header.Set("Origin", origin)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			want := map[bool]int{false: http.StatusOK, true: http.StatusNoContent}[preflight]
			if !admitted {
				want = http.StatusForbidden
			}
			require.Equal(t, want, rec.Code, "%s preflight=%v", origin, preflight)
			if admitted {
				require.Equal(t, origin, rec.Header().Get("Access-Control-Allow-Origin"))
			}
		}
		// Other routes admit only api.cors.allowedOrigins: none here.
		req := httptest.NewRequest(http.MethodGet, "/api/v1/workspaces", nil)
		req.Header.Set("Origin", origin)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusForbidden, rec.Code, origin)
	}
}
