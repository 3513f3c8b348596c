package events

import (
	"sync"
	"time"
)

// frame is one message for subscribers, encoded once for all of them. A
// change frame's body is its JSON without seq: each subscriber numbers its
// own stream and writes `{"seq":N,` in front of body[1:].
type frame struct {
	change      bool
	workspaceID string    // whose change it is, for the workspace_id filter
	body        []byte    // the encoded frame, without seq
	received    time.Time // when the notification arrived, for the latency histogram
}

// resyncFrame tells a subscriber to list again.
var resyncFrame = &frame{body: []byte(`{"type":"resync"}`)}

// subscriber is one websocket connection's place in the hub.
type subscriber struct {
	workspaceID string      // "" for every workspace
	queue       chan *frame // bounded; full means the subscriber fell behind
	lagged      chan struct{}
	quit        chan struct{} // closed when the server shuts down
}

func (s *subscriber) wants(f *frame) bool {
	return !f.change || s.workspaceID == "" || s.workspaceID == f.workspaceID
}

// hub fans frames out to subscribers. Publishing never blocks: a subscriber
// whose queue is full is removed and told it lagged, so it is sent resync
// and closed by its own goroutine while everyone else carries on.
type hub struct {
	queueLen int
	metrics  *metrics

	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
	wg     sync.WaitGroup // one per subscriber until its connection is done
}

func newHub(queueLen int, m *metrics) *hub {
	return &hub{queueLen: queueLen, metrics: m, subs: make(map[*subscriber]struct{})}
}

// subscribe adds a subscriber, or returns nil once the hub is closed. The
// caller calls done when the connection is over.
func (h *hub) subscribe(workspaceID string) *subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	s := &subscriber{
		workspaceID: workspaceID,
		queue:       make(chan *frame, h.queueLen),
		lagged:      make(chan struct{}),
		quit:        make(chan struct{}),
	}
	h.subs[s] = struct{}{}
	h.wg.Add(1)
	h.metrics.subscribers.Inc()
	return s
}

// done removes s, if it is still there, and counts its connection over.
func (h *hub) done(s *subscriber) {
	h.mu.Lock()
	h.remove(s)
	h.mu.Unlock()
	h.wg.Done()
}

// remove takes s out of the hub; h.mu is held.
func (h *hub) remove(s *subscriber) {
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		h.metrics.subscribers.Dec()
	}
}

// publish queues f for every subscriber that wants it.
func (h *hub) publish(f *frame) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.wants(f) {
			h.offer(s, f)
		}
	}
}

// resyncAll queues resync for every subscriber: notifications may have been
// missed.
func (h *hub) resyncAll() {
	h.publish(resyncFrame)
}

// offer queues f for s without waiting; h.mu is held. A full queue drops s
// from the hub and signals lagged: its writer then sends resync and
// closes.
func (h *hub) offer(s *subscriber, f *frame) {
	select {
	case s.queue <- f:
	default:
		h.remove(s)
		close(s.lagged)
	}
}

// close removes every subscriber, tells each to go away, refuses new ones
// and waits until every connection is over.
func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	for s := range h.subs {
		h.remove(s)
		close(s.quit)
	}
	h.mu.Unlock()
	h.wg.Wait()
}
