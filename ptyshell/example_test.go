package ptyshell_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// The server side: answer every refusal before the upgrade, then hand the
// upgraded connection and the created container's stream to Serve, which
// closes both. Cancel the context with ErrTerminated to kill the session,
// with ErrServerShutdown on shutdown.
func Example_server() {
	var openStream func(ctx context.Context, h ptyshell.Handshake) (ptyshell.Stream, error) // server/docker's OpenShell
	upgrader := websocket.Upgrader{
		Subprotocols:     []string{ptyshell.Subprotocol},
		HandshakeTimeout: ptyshell.HandshakeTimeout,
		CheckOrigin:      func(r *http.Request) bool { return r.Header.Get("Origin") == "" }, // the real rule: no Origin, or one in api.cors.allowedOrigins
	}
	handler := func(w http.ResponseWriter, r *http.Request) {
		if !ptyshell.Offered(r) {
			http.Error(w, "subprotocol_required", http.StatusBadRequest) // the envelope, really
			return
		}
		h, err := ptyshell.ParseHandshake(r.URL.Query())
		if err != nil {
			http.Error(w, "invalid_terminal: "+err.Error(), http.StatusBadRequest)
			return
		}
		stream, err := openStream(r.Context(), h) // created, not started
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		conn, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			_ = stream.Close() // the upgrade failed: tear the container down
			return
		}
		ctx, kill := context.WithCancelCause(context.WithoutCancel(r.Context()))
		defer kill(nil)
		res := ptyshell.Serve(ctx, conn, stream, ptyshell.ServeOptions{
			Status:      ptyshell.Status{ShellID: "01J…", Container: "cairn.shell.ws.01J…", WorkspaceID: "ws", WorkspaceName: "ws-alpha"},
			Size:        h.Size,
			IdleTimeout: 30 * time.Minute,
			OpenedAt:    time.Now(),
			Running:     func(context.Context) error { return nil }, // the SHELL_OPENED audit row
			Logger:      slog.Default(),
		})
		slog.Info("shell ended", "reason", res.Reason, "exit_code", res.ExitCode, "bytes_in", res.BytesIn, "bytes_out", res.BytesOut)
	}
	_ = handler
}

// The client side: dial with your own headers, hand the connection to
// NewSession, then either drive the Session directly or run a Terminal on
// it (directly in `cairn shell`, through tea.Exec in the TUI).
func Example_client() {
	h := ptyshell.Handshake{Size: ptyshell.Size{Cols: 120, Rows: 40}}
	dialer := websocket.Dialer{Subprotocols: []string{ptyshell.Subprotocol}, HandshakeTimeout: ptyshell.HandshakeTimeout}
	header := http.Header{"Authorization": {"Bearer …"}}
	conn, resp, err := dialer.Dial("ws://127.0.0.1:8080/v1/workspaces/ws/shell?"+h.Query().Encode(), header)
	if resp != nil {
		_ = resp.Body.Close() // a refusal's envelope is read before this, into a *cairn.Error
	}
	if err != nil {
		return
	}
	session, err := ptyshell.NewSession(conn, ptyshell.SessionOptions{})
	if err != nil { // errors.Is(err, ptyshell.ErrUnsupportedProtocol)
		return
	}
	term, err := ptyshell.NewTerminal(session, ptyshell.TerminalOptions{Workspace: "ws-alpha", DetachKey: "ctrl-]"})
	if err != nil {
		return
	}
	_ = term.Run() // nil after EXIT or detach; a *LostError without EXIT
	os.Exit(term.Result().ExitStatus())
}
