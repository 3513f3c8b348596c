package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
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
