package server

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/auth"
)

// TestAuthOpenRefusesExposed checks the start-up rule of authentication:
// Open refuses before dialling anything when no token is configured and a
// listener is not on loopback.
func TestAuthOpenRefusesExposed(t *testing.T) {
	t.Parallel()
	cfg := DefaultConfig() // both listeners on 0.0.0.0, no tokens
	_, err := Open(t.Context(), cfg, Secrets{}, Options{})
	require.ErrorIs(t, err, auth.ErrExposed)
	require.Contains(t, err.Error(), "auth.insecureNoAuth")

	var logs bytes.Buffer
	cfg.Auth.InsecureNoAuth = true
	require.NoError(t, auth.CheckExposure(len(cfg.Auth.Tokens), cfg.Loopback(), cfg.Auth.InsecureNoAuth,
		slog.New(slog.NewTextHandler(&logs, nil))))
	require.Contains(t, logs.String(), "level=WARN")

	// An authorization server's access tokens authenticate too.
	require.Zero(t, cfg.Auth.credentials())
	cfg.Auth.OAuth = OAuthConfig{AuthorizationServers: []string{"https://login.example"}}
	require.Zero(t, cfg.Auth.credentials(), "no audience to hold the tokens to: none accepted")
	cfg.Auth.OAuth.Resource = "https://cairn.example/v1/mcp"
	require.Equal(t, 1, cfg.Auth.credentials())
}
