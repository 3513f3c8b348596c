package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/route"
)

// statusOf sends method path with the bearer token (none when "") through h.
func statusOf(t *testing.T, h http.Handler, method, path, bearer string) int {
	t.Helper()
	r := httptest.NewRequestWithContext(t.Context(), method, path, nil)
	if bearer != "" {
		r.Header.Set("Authorization", "Bearer "+bearer)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code
}

func TestRegister(t *testing.T) {
	t.Parallel()
	mount := func(t *testing.T, tokens []Token) (*Guard, http.Handler) {
		t.Helper()
		g, err := New(Config{Tokens: tokens})
		require.NoError(t, err)
		h, err := g.Mount("/", testRoutes())
		require.NoError(t, err)
		return g, h
	}

	t.Run("ScopesHeldUntilRevoked", func(t *testing.T) {
		t.Parallel()
		g, h := mount(t, testTokens())
		secret, revoke := g.Register("ssh:reader", []route.Scope{route.Read})
		require.Equal(t, http.StatusOK, statusOf(t, h, "GET", "/v1/workspaces", secret))
		require.Equal(t, http.StatusForbidden, statusOf(t, h, "DELETE", "/v1/workspaces/x", secret))
		revoke()
		revoke() // idempotent
		require.Equal(t, http.StatusUnauthorized, statusOf(t, h, "GET", "/v1/workspaces", secret))
	})

	t.Run("ScopesHeldWithAuthenticationOff", func(t *testing.T) {
		t.Parallel()
		g, h := mount(t, nil)
		secret, revoke := g.Register("ssh:reader", []route.Scope{route.Read})
		defer revoke()
		require.Equal(t, http.StatusForbidden, statusOf(t, h, "POST", "/v1/workspaces", secret))
		require.Equal(t, http.StatusOK, statusOf(t, h, "POST", "/v1/workspaces", ""), "no token: authentication is off")
	})

	t.Run("EachTokenDiffers", func(t *testing.T) {
		t.Parallel()
		g, _ := mount(t, nil)
		a, ra := g.Register("a", nil)
		b, rb := g.Register("a", nil)
		defer ra()
		defer rb()
		require.NotEqual(t, a, b)
		require.Len(t, a, 64)
	})
}
