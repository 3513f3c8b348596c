package ptyshelltest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// HubServer serves a ptyshell.Hub over websockets: /attach attaches a
// writer, /watch a watcher, each running ptyshell.Serve over its tap, v2
// subprotocol only.
type HubServer struct {
	URL  string
	HTTP *httptest.Server
}

// NewHubServer starts a HubServer for hub; base is every connection's
// ServeOptions before the tap completes it. Cleanup closes it.
func NewHubServer(t testing.TB, hub *ptyshell.Hub, base ptyshell.ServeOptions) *HubServer {
	t.Helper()
	up := websocket.Upgrader{Subprotocols: []string{ptyshell.SubprotocolV2}}
	s := &HubServer{}
	s.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role := ptyshell.RoleWriter
		if r.URL.Path == "/watch" {
			role = ptyshell.RoleWatcher
		}
		h, err := ptyshell.ParseHandshake(r.URL.Query())
		if err != nil {
			h = ptyshell.Handshake{}
		}
		tap, err := hub.Attach(r.Context(), role, h.Size)
		if err != nil {
			http.Error(w, err.Error(), http.StatusGone)
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			_ = tap.Close() // Upgrade has answered
			return
		}
		ptyshell.Serve(tap.Context(), conn, tap, tap.Options(base))
	}))
	s.URL = "ws" + strings.TrimPrefix(s.HTTP.URL, "http")
	t.Cleanup(func() {
		s.HTTP.CloseClientConnections()
		s.HTTP.Close()
	})
	return s
}

// DialV2 opens a websocket to url offering v2 then v1. Cleanup closes it.
func DialV2(t testing.TB, url string) *Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{ptyshell.SubprotocolV2, ptyshell.Subprotocol}, HandshakeTimeout: Guard}
	conn, resp, err := d.Dial(url, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close() // nothing to read from a 101
	}
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { _ = conn.Close() }) // may already be closed
	return &Conn{Conn: conn}
}

// Screen is a fake ptyshell.Screen: it keeps the last Limit bytes written
// (all of them when Limit is 0), and renders them behind a marker naming
// its size, so a test sees what a reattach replays and at which size.
type Screen struct {
	Limit int

	mu         sync.Mutex
	cols, rows int
	buf        []byte
}

// NewScreen is a ptyshell.HubOptions NewScreen making fake Screens.
func NewScreen(cols, rows int) ptyshell.Screen { return &Screen{cols: cols, rows: rows} }

func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.buf = append(s.buf, p...)
	if s.Limit > 0 && len(s.buf) > s.Limit {
		s.buf = s.buf[len(s.buf)-s.Limit:]
	}
	return len(p), nil
}

func (s *Screen) Resize(cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cols, s.rows = cols, rows
}

// Render returns "[render COLSxROWS]" followed by the bytes kept.
func (s *Screen) Render() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(RenderMarker(s.cols, s.rows), s.buf...)
}

// RenderMarker is what a fake Screen's render starts with.
func RenderMarker(cols, rows int) []byte { return fmt.Appendf(nil, "[render %dx%d]", cols, rows) }
