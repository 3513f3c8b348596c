package ptyshelltest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// ScriptServer is an httptest server for client-side tests: it upgrades
// every request, answering with the first of subprotocols the client
// offers (nil means ptyshell.Subprotocol; an empty, non-nil slice means
// none), and runs script on the connection, which it closes when script
// returns. It returns the ws:// URL. Cleanup closes the server.
func ScriptServer(t testing.TB, subprotocols []string, script func(c *websocket.Conn)) string {
	t.Helper()
	if subprotocols == nil {
		subprotocols = []string{ptyshell.Subprotocol}
	}
	up := websocket.Upgrader{Subprotocols: subprotocols}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered
		}
		defer func() { _ = c.Close() }() // may already be closed by the script
		script(c)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http")
}

// WriteFrame writes one binary message of type typ.
func WriteFrame(c *websocket.Conn, typ ptyshell.FrameType, payload []byte) error {
	return c.WriteMessage(websocket.BinaryMessage, ptyshell.Frame{Type: typ, Payload: payload}.Encode())
}

// WriteControl writes one control frame whose payload is v as JSON.
func WriteControl(c *websocket.Conn, typ ptyshell.FrameType, v any) error {
	msg, err := ptyshell.EncodeControl(typ, v)
	if err != nil {
		return err
	}
	return c.WriteMessage(websocket.BinaryMessage, msg)
}

// WriteExit writes EXIT and then the close frame of its reason, as a server
// ends a session.
func WriteExit(c *websocket.Conn, exit ptyshell.Exit) error {
	if err := WriteControl(c, ptyshell.FrameExit, exit); err != nil {
		return err
	}
	return c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(exit.Reason.CloseCode(), string(exit.Reason)))
}
