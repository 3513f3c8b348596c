package clienttest

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
)

// queueFrames bounds a subscriber's unsent frames; beyond it the server
// sends resync and closes, as the real one does with a slow subscriber.
const queueFrames = 1024

// subscriber is one /v1/events connection.
type subscriber struct {
	wsID   string // the workspace_id filter, "" for all
	frames chan cairn.Event
	once   sync.Once
	done   chan struct{}
}

func (sub *subscriber) stop() { sub.once.Do(func() { close(sub.done) }) }

func (sub *subscriber) wants(ev cairn.Event) bool {
	return sub.wsID == "" || ev.WorkspaceOf() == sub.wsID || ev.WorkspaceOf() == ""
}

// Emit sends a frame to every subscriber (change frames get their seq
// per connection); mutations emit their own.
func (s *Server) Emit(ev cairn.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emit(ev)
}

func (s *Server) emit(ev cairn.Event) {
	if s.muted && ev.IsChange() {
		return
	}
	if ev.IsChange() && ev.At.IsZero() {
		ev.At = s.clock().UTC()
	}
	for sub := range s.subs {
		if !sub.wants(ev) {
			continue
		}
		select {
		case sub.frames <- ev:
		default: // too slow: resync and close
			delete(s.subs, sub)
			sub.stop()
		}
	}
}

// emitWS announces a workspace row's change; the caller holds mu.
func (s *Server) emitWS(w *cairn.Workspace) {
	s.bump(workspaceList)
	s.emit(cairn.Event{Type: cairn.EventWorkspaceUpserted, ID: w.ID, Workspace: copyWS(w)})
}

// emitArt announces an artifact row's change; the caller holds mu.
func (s *Server) emitArt(a *cairn.Artifact) {
	s.bump(artifactList(a.WorkspaceID))
	s.emit(cairn.Event{Type: cairn.EventArtifactUpserted, ID: a.ID, Artifact: copyArt(a)})
}

// Unannounced runs change with no change frame sent for what it does, as
// when the server lost a notification; the lists change all the same.
func (s *Server) Unannounced(change func()) {
	s.mu.Lock()
	s.muted = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.muted = false
		s.mu.Unlock()
	}()
	change()
}

// Resync sends every subscriber a resync frame.
func (s *Server) Resync() { s.Emit(cairn.Event{Type: cairn.EventResync}) }

// DropConnection closes every events connection without a close frame's
// reason, as a lost network does; clients redial.
func (s *Server) DropConnection() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		delete(s.subs, sub)
		sub.stop()
	}
}

// Subscribers is how many events connections are open.
func (s *Server) Subscribers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.subs)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(r *http.Request) bool { return r.Header.Get("Origin") == "" }}

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered
	}
	defer func() { _ = conn.Close() }() // the connection ends either way
	sub := &subscriber{wsID: r.URL.Query().Get("workspace_id"), frames: make(chan cairn.Event, queueFrames), done: make(chan struct{})}
	s.mu.Lock()
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, sub)
		s.mu.Unlock()
	}()
	go func() { // the reader notices the client's close
		defer sub.stop()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	if send(conn, cairn.Event{Type: cairn.EventHello, ServerTime: s.clock().UTC()}) != nil {
		return
	}
	var seq int64
	for {
		select {
		case <-sub.done:
			return
		case <-s.closing:
			return
		case ev := <-sub.frames:
			if ev.IsChange() {
				seq++
				ev.Seq = seq
			}
			if send(conn, ev) != nil {
				return
			}
		}
	}
}

func send(conn *websocket.Conn, ev cairn.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	_ = conn.SetWriteDeadline(time.Now().Add(10 * time.Second)) // a dead peer ends the loop
	return conn.WriteMessage(websocket.TextMessage, b)
}
