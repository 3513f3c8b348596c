package service

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// File watches. A watched workspace has one watcher (Runtime.Watch) while
// anyone watches it, and a hub that numbers its batches, keeps the last
// watchRing of them for reconnects and fans each out to the subscribers
// whose path it touches. A cursor names the hub and a batch: a subscriber
// that comes back with one gets what it missed, or a resync when the hub
// is another (the watcher was replaced) or the batch is no longer kept.
// Every queue is bounded; a subscriber that falls behind is told to
// resync and let go.

const (
	watchRing     = 1024             // batches kept for reconnects
	watchQueue    = 256              // frames waiting for one subscriber
	watchLinger   = 30 * time.Second // a hub outlives its last subscriber this long
	watchReadyMax = 30 * time.Second // a watcher's start, ready included
)

// FileWatch is one subscriber's feed of a workspace's file changes under
// a path: encoded frames (cairn.EventFilesChanged, cairn.EventFilesResync).
// Lagged is closed when it fell behind (its last frame a resync), Ended
// when the watch ended for good; Close lets go of it.
type FileWatch struct {
	hub    *watchHub
	path   string
	frames chan []byte
	lagged chan struct{}
	ended  chan struct{}
	once   sync.Once
}

func (f *FileWatch) Frames() <-chan []byte   { return f.frames }
func (f *FileWatch) Lagged() <-chan struct{} { return f.lagged }
func (f *FileWatch) Ended() <-chan struct{}  { return f.ended }
func (f *FileWatch) Close()                  { f.hub.leave(f) }

// watchHubs are the service's hubs, by workspace.
type watchHubs struct {
	mu   sync.Mutex
	hubs map[string]*watchHub
}

// WatchFiles subscribes to the changes under path of a READY workspace's
// volume, from cursor when the caller has one. Reasons: invalid_path,
// path_outside_mount, invalid_parameters (a malformed cursor),
// workspace_not_found, volume_not_ready, watch_unavailable,
// docker_unavailable, sidecar_busy.
func (s *Service) WatchFiles(ctx context.Context, workspaceID, path, cursor string) (*FileWatch, error) {
	if err := cairn.ValidateListPath(path); err != nil {
		return nil, err
	}
	hubID, seq, err := parseCursor(cursor)
	if err != nil {
		return nil, err
	}
	h, err := s.watchHub(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	return h.join(strings.TrimSuffix(path, "/"), hubID, seq), nil
}

// watchHub returns the workspace's running hub, starting one.
func (s *Service) watchHub(ctx context.Context, workspaceID string) (*watchHub, error) {
	s.watches.mu.Lock()
	defer s.watches.mu.Unlock()
	if h := s.watches.hubs[workspaceID]; h != nil && !h.isEnded() {
		return h, nil
	}
	ws, err := s.store.FindWorkspace(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	if ws.VolumeState != cairn.VolumeReady {
		return nil, cairn.Errorf(cairn.ReasonVolumeNotReady, "workspace %s has no volume to watch", workspaceID)
	}
	h := &watchHub{s: s, ws: ws.ID, id: ulid.Make().String(), subs: map[*FileWatch]struct{}{}, ended: make(chan struct{})}
	if err := h.start(ctx, BrowseTarget{WorkspaceID: ws.ID, VolumeName: ws.VolumeName}); err != nil {
		return nil, err
	}
	if s.watches.hubs == nil {
		s.watches.hubs = map[string]*watchHub{}
	}
	s.watches.hubs[ws.ID] = h
	return h, nil
}

// watchHub is one workspace's watcher and its subscribers.
type watchHub struct {
	s      *Service
	ws, id string
	stream WatchStream
	ended  chan struct{}

	mu     sync.Mutex
	subs   map[*FileWatch]struct{}
	seq    int64
	ring   []ringFrame
	linger *time.Timer
}

// ringFrame is one kept batch: its number, and the changes for refiltering.
type ringFrame struct {
	seq     int64
	changes []sidecar.Change
	resync  string
}

// start runs the watcher and waits for its first line, Ready.
func (h *watchHub) start(ctx context.Context, t BrowseTarget) error {
	ctx, cancel := context.WithTimeout(ctx, watchReadyMax)
	defer cancel()
	stream, err := h.s.runtime.Watch(ctx, t, h.s.watchPoll)
	if err != nil {
		return err
	}
	select {
	case l, ok := <-stream.Lines():
		if !ok || !l.Ready {
			stream.Close()
			return cairn.Errorf(cairn.ReasonSidecarFailed, "the watcher ended before it was ready")
		}
	case <-ctx.Done():
		stream.Close()
		return &cairn.Error{Reason: cairn.ReasonSidecarTimeout, Detail: "the watcher was not ready in time", Err: ctx.Err()}
	}
	h.stream = stream
	go h.run()
	return nil
}

// run fans the watcher's lines out until it ends, then ends every feed.
func (h *watchHub) run() {
	for l := range h.stream.Lines() {
		h.publish(ringFrame{changes: l.Changes, resync: l.Resync})
	}
	if err := h.stream.Err(); err != nil {
		h.s.log.Info("file watcher ended", "workspace_id", h.ws, "err", err)
	}
	h.end()
}

// publish numbers a batch, keeps it and sends it to every subscriber it
// concerns; one whose queue is full lags.
func (h *watchHub) publish(f ringFrame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	f.seq = h.seq
	if len(h.ring) == watchRing {
		h.ring = h.ring[1:]
	}
	h.ring = append(h.ring, f)
	bodies := map[string][]byte{} // f encoded once for each path subscribed to
	for sub := range h.subs {
		body, ok := bodies[sub.path]
		if !ok {
			body = h.frame(sub.path, f)
			bodies[sub.path] = body
		}
		h.send(sub, body)
	}
}

// deliver queues f for sub, filtered to sub's path; the caller holds mu.
func (h *watchHub) deliver(sub *FileWatch, f ringFrame) {
	h.send(sub, h.frame(sub.path, f))
}

// send queues an encoded frame for sub (nil: none); the caller holds mu.
func (h *watchHub) send(sub *FileWatch, body []byte) {
	if body == nil {
		return
	}
	select {
	case sub.frames <- body:
	default:
		delete(h.subs, sub)
		sub.once.Do(func() { close(sub.lagged) })
	}
}

// frame encodes f for a subscriber of path, or nil when it touches
// nothing under it.
func (h *watchHub) frame(path string, f ringFrame) []byte {
	ev := cairn.Event{WorkspaceID: h.ws, Cursor: h.id + "." + strconv.FormatInt(f.seq, 10),
		At: cairn.Timestamp(h.s.now())}
	if f.resync != "" {
		ev.Type, ev.Reason = cairn.EventFilesResync, f.resync
	} else {
		ev.Type = cairn.EventFilesChanged
		for _, c := range f.changes {
			if c.Path == path || strings.HasPrefix(c.Path, path+"/") {
				ev.Changes = append(ev.Changes, cairn.FileChangeNote{Path: c.Path, Op: c.Op, Dir: c.Dir})
			}
		}
		if len(ev.Changes) == 0 {
			return nil
		}
	}
	b, _ := json.Marshal(ev) // strings, a time and bools: cannot fail
	return b
}

// join adds a subscriber, replaying what it missed since its cursor, or a
// resync when that cannot be had.
func (h *watchHub) join(path, hubID string, seq int64) *FileWatch {
	sub := &FileWatch{hub: h, path: path, frames: make(chan []byte, watchQueue),
		lagged: make(chan struct{}), ended: h.ended}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.linger != nil {
		h.linger.Stop()
		h.linger = nil
	}
	h.subs[sub] = struct{}{}
	switch {
	case hubID == "":
	case hubID != h.id || (len(h.ring) > 0 && seq < h.ring[0].seq-1) || seq > h.seq:
		h.deliver(sub, ringFrame{seq: h.seq, resync: cairn.ResyncCursorUnknown})
	default:
		for _, f := range h.ring {
			if f.seq > seq {
				h.deliver(sub, f)
			}
		}
	}
	return sub
}

// leave removes a subscriber; the last one starts the linger, after which
// the watcher goes.
func (h *watchHub) leave(sub *FileWatch) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, sub)
	if len(h.subs) == 0 && h.linger == nil && !h.isEnded() {
		h.linger = time.AfterFunc(watchLinger, h.lingered)
	}
}

func (h *watchHub) lingered() {
	h.mu.Lock()
	idle := len(h.subs) == 0
	h.mu.Unlock()
	if idle {
		h.stream.Close() // run then ends the hub
	}
}

// end closes the hub: every feed learns it ended, and the next subscriber
// starts another watcher.
func (h *watchHub) end() {
	h.mu.Lock()
	if !h.isEnded() {
		close(h.ended)
	}
	h.subs = map[*FileWatch]struct{}{}
	h.mu.Unlock()
	h.s.watches.mu.Lock()
	if h.s.watches.hubs[h.ws] == h {
		delete(h.s.watches.hubs, h.ws)
	}
	h.s.watches.mu.Unlock()
	h.stream.Close()
}

func (h *watchHub) isEnded() bool {
	select {
	case <-h.ended:
		return true
	default:
		return false
	}
}

// parseCursor reads "<hub>.<seq>"; "" is no cursor.
func parseCursor(c string) (string, int64, error) {
	if c == "" {
		return "", 0, nil
	}
	hub, n, ok := strings.Cut(c, ".")
	seq, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || seq < 0 || len(hub) != 26 {
		return "", 0, cairn.Errorf(cairn.ReasonInvalidParameters, "the cursor is not one a files frame gave")
	}
	return hub, seq, nil
}

// Watchers is a runtime's running watch streams, so that a workspace's
// teardown and the server's shutdown can end them.
type Watchers struct {
	mu  sync.Mutex
	all map[WatchStream]string // → its workspace
}

func (s *Watchers) Add(workspaceID string, w WatchStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.all == nil {
		s.all = map[WatchStream]string{}
	}
	s.all[w] = workspaceID
}

func (s *Watchers) Remove(w WatchStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.all, w)
}

// Stop closes the workspace's streams ("": every one) and returns once
// each Close did.
func (s *Watchers) Stop(workspaceID string) {
	s.mu.Lock()
	var ending []WatchStream
	for w, ws := range s.all {
		if workspaceID == "" || ws == workspaceID {
			ending = append(ending, w)
		}
	}
	s.mu.Unlock()
	for _, w := range ending {
		w.Close()
	}
}
