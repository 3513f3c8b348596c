package main

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/server"
)

func TestTokenNew(t *testing.T) {
	out, err := execute(t, nil, "token", "new", "--name", "ci-bot", "--scopes", "read, write,read")
	require.NoError(t, err)
	token, rest, found := strings.Cut(out, "\n")
	require.True(t, found)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err, "the token is URL-safe base64")
	require.GreaterOrEqual(t, len(raw), 32)

	var entries []server.TokenConfig
	require.NoError(t, yaml.Unmarshal([]byte(rest), &entries), rest)
	require.Len(t, entries, 1)
	sum := sha256.Sum256([]byte(token))
	require.Equal(t, server.TokenConfig{Name: "ci-bot", SHA256: hex.EncodeToString(sum[:]), Scopes: []string{"read", "write"}}, entries[0])

	// The entry is a valid auth.tokens config.
	cfg, _, err := server.ParseConfig([]byte("auth:\n  tokens:\n" + indent(rest, "    ")))
	require.NoError(t, err)
	require.Equal(t, entries, cfg.Auth.Tokens)

	again, err := execute(t, nil, "token", "new", "--name", "ci-bot", "--scopes", "read")
	require.NoError(t, err)
	require.NotEqual(t, token, strings.SplitN(again, "\n", 2)[0], "every token is fresh")
}

func TestTokenNewRejects(t *testing.T) {
	for name, args := range map[string][]string{
		"NoName":       {"--scopes", "read"},
		"BadName":      {"--name", "a b", "--scopes", "read"},
		"NoScopes":     {"--name", "x"},
		"UnknownScope": {"--name", "x", "--scopes", "read,root"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := execute(t, nil, append([]string{"token", "new"}, args...)...)
			require.Error(t, err)
		})
	}
}

func indent(s, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.TrimSpace(line) != "" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	return b.String()
}
