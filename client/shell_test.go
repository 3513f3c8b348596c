package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

func TestShellDial(t *testing.T) {
	t.Parallel()

	t.Run("RequestAndSession", func(t *testing.T) {
		t.Parallel()
		seen := make(chan *http.Request, 1)
		up := websocket.Upgrader{Subprotocols: []string{ptyshell.Subprotocol}}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			seen <- r
			conn, err := up.Upgrade(w, r, nil)
			if err != nil {
				return
			}
			defer func() { _ = conn.Close() }() // the session is over either way
			_ = ptyshelltest.WriteFrame(conn, ptyshell.FrameOutput, []byte("hello"))
			_ = ptyshelltest.WriteExit(conn, ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited})
		}))
		t.Cleanup(srv.Close)
		cl, err := client.New(srv.URL+"/api", client.WithToken("tok-1"))
		require.NoError(t, err)
		sess, err := cl.Shell(t.Context(), "0b6e7a4c-3f1e-4c4e-9d7a-1f2e3d4c5b6a", ptyshell.Size{Cols: 120, Rows: 40}, "vt100")
		require.NoError(t, err)
		defer func() { _ = sess.Close() }() // always nil

		r := <-seen
		require.Equal(t, "/api/v1/workspaces/0b6e7a4c-3f1e-4c4e-9d7a-1f2e3d4c5b6a/shell", r.URL.Path)
		require.Equal(t, "cols=120&rows=40&term=vt100", r.URL.RawQuery)
		require.Equal(t, "Bearer tok-1", r.Header.Get("Authorization"), "the token travels in the header")
		require.Empty(t, r.Header.Get("Origin"))
		require.Equal(t, []string{ptyshell.Subprotocol}, websocket.Subprotocols(r))

		m, err := sess.Next(t.Context())
		require.NoError(t, err)
		require.Equal(t, "hello", string(m.Output))
		m, err = sess.Next(t.Context())
		require.NoError(t, err)
		require.Equal(t, 3, m.Exit.ExitCode)
	})

	t.Run("RefusalIsAnError", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Request-ID", "req-9")
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]any{"success": false, "request_id": "req-9", "error": map[string]any{
				"code": 409, "reason": "volume_not_ready", "message": "Cannot open a shell", "detail": "set it up first"}})
		}))
		t.Cleanup(srv.Close)
		cl, err := client.New(srv.URL)
		require.NoError(t, err)
		_, err = cl.Shell(t.Context(), "ws1", ptyshell.Size{Cols: 80, Rows: 24}, "")
		var ce *cairn.Error
		require.ErrorAs(t, err, &ce)
		require.Equal(t, http.StatusConflict, ce.Status)
		require.Equal(t, cairn.ReasonVolumeNotReady, ce.Reason)
		require.Equal(t, "Cannot open a shell", ce.Message)
		require.Equal(t, "set it up first", ce.Detail)
		require.Equal(t, "req-9", ce.RequestID)
	})

	t.Run("WrongSubprotocol", func(t *testing.T) {
		t.Parallel()
		url := ptyshelltest.ScriptServer(t, []string{}, func(c *websocket.Conn) { _, _, _ = c.ReadMessage() })
		cl, err := client.New("http" + strings.TrimPrefix(url, "ws"))
		require.NoError(t, err)
		_, err = cl.Shell(t.Context(), "ws1", ptyshell.Size{Cols: 80, Rows: 24}, "")
		require.ErrorIs(t, err, ptyshell.ErrUnsupportedProtocol)
	})

	t.Run("NoServerIsUnreachable", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		url := srv.URL
		srv.Close()
		cl, err := client.New(url)
		require.NoError(t, err)
		_, err = cl.Shell(t.Context(), "ws1", ptyshell.Size{Cols: 80, Rows: 24}, "")
		require.True(t, client.IsUnreachable(err), "err: %v", err)

		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		_, err = cl.Shell(ctx, "ws1", ptyshell.Size{Cols: 80, Rows: 24}, "")
		require.True(t, errors.Is(err, context.Canceled), "err: %v", err)
	})
}
