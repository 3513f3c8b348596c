package ptyshell_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
)

func TestParseHandshake(t *testing.T) {
	t.Parallel()
	h := ptyshell.Handshake{Size: ptyshell.Size{Cols: 120, Rows: 40}, Term: "screen.xterm-256color"}
	got, err := ptyshell.ParseHandshake(h.Query())
	require.NoError(t, err)
	require.Equal(t, h, got)

	got, err = ptyshell.ParseHandshake(url.Values{"cols": {"1"}, "rows": {"1000"}})
	require.NoError(t, err)
	require.Equal(t, ptyshell.Handshake{Size: ptyshell.Size{Cols: 1, Rows: 1000}, Term: ptyshell.DefaultTerm}, got)

	bad := []string{
		"rows=40", "cols=120", "cols=0&rows=40", "cols=1001&rows=40", "cols=12a&rows=40", "cols=80.0&rows=24",
		"cols=-1&rows=24", "cols=80&rows=24&term=", "cols=80&rows=24&term=xterm%20evil", "cols=80&rows=24&term=a%3Bb",
		"cols=80&rows=24&term=" + string(make([]byte, 65)),
	}
	for _, raw := range bad {
		q, err := url.ParseQuery(raw)
		require.NoError(t, err)
		_, err = ptyshell.ParseHandshake(q)
		require.Error(t, err, raw)
	}
}

func TestOffered(t *testing.T) {
	t.Parallel()
	for header, want := range map[string]bool{
		"":                                     false,
		"cairn.ptyshell.v1":                    true,
		"cairn.ptyshell.v2, cairn.ptyshell.v1": true,
		"cairn.ptyshell.v0":                    false,
	} {
		r := httptest.NewRequest(http.MethodGet, "/shell", nil)
		if header != "" {
			r.Header.Set("Sec-WebSocket-Protocol", header)
		}
		require.Equal(t, want, ptyshell.Offered(r), header)
	}
}
