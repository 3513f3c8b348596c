// Package live is cairn-tui's event pump and coalescing hub. The pump owns
// the events subscription in its own goroutine and writes only into the hub,
// as FileWatch does with the files pane's subscription to a directory;
// the hub merges frames by entity, never blocks a writer, and hands the
// model at most one batch per pace interval. It imports no Charm library.
package live

import (
	"context"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
)

// ConnKind is a connection transition seen by the pump.
type ConnKind uint8

const (
	// ConnDialing: the pump opened a subscription and waits for hello.
	ConnDialing ConnKind = iota + 1
	// ConnHello: the server said hello; the stream is live.
	ConnHello
	// ConnLost: the connection dropped or a dial failed; it is retried.
	ConnLost
	// ConnStopped: retrying cannot help (401, 403); only Retry restarts.
	ConnStopped
)

// Conn is one connection transition.
type Conn struct {
	Kind       ConnKind
	At         time.Time
	ServerTime time.Time     // hello
	RetryIn    time.Duration // lost: until the next dial
	// Unavailable: the server has no events endpoint (404, 501).
	Unavailable bool
	Err         error
}

// Sample is one progress report of a transfer: bytes moved and the
// total, stamped when the hub received it, so the model's rate and ETA
// depend on the samples alone.
type Sample struct {
	Transfer    int
	Hashing     bool // an upload's read of the file for its digest
	Done, Total int64
	// Parts of PartsTotal parts are complete (a multipart upload, a
	// ranged download); PartsTotal is 0 for a transfer in one piece.
	Parts, PartsTotal int
	At                time.Time
}

// Note is what a transfer's client said about an interrupted run of it:
// resumed, or started over and why (one sentence).
type Note struct {
	Transfer int
	Text     string
}

// Batch is everything the hub gathered since the last delivery.
type Batch struct {
	Events []cairn.Event // merged: the latest frame per entity, deletes kept
	Resync []string      // reasons; non-empty means list again
	Conn   []Conn        // transitions in order
	// Progress is the latest sample of each transfer that reported, in
	// the order they first reported.
	Progress []Sample
	// Notes are the transfers' notes in order (at most maxNotes, newest
	// kept).
	Notes []Note
	At    time.Time
	// Files is what the files subscription reported (FileWatch), nil
	// when it reported nothing.
	Files *Files
	// Warnings are the lifecycle warning frames (workspace.expiring,
	// workspace.archiving) in the order they came, the latest of each
	// kind per workspace. They are kept apart from Events: a warning is
	// no change of its workspace's row, so it neither replaces a pending
	// upsert of it nor is replaced by one, and an events overflow (a
	// resync lists rows again, never warnings) keeps them.
	Warnings []cairn.Event
	// Epoch is the hub's epoch when the batch was taken: events, warnings,
	// resyncs and transitions of an older one are another connection's.
	Epoch int
}

// Empty reports a batch with nothing in it.
func (b Batch) Empty() bool {
	return len(b.Events)+len(b.Warnings)+len(b.Resync)+len(b.Conn)+len(b.Progress)+len(b.Notes) == 0 && b.Files == nil
}

// entityKey is what a frame changes: a workspace, an artifact or a
// snapshot, by ID.
type entityKey struct {
	kind byte // 'w', 'a', 's'
	id   string
}

func keyOf(ev cairn.Event) entityKey {
	switch {
	case ev.Type == cairn.EventWorkspaceUpserted || ev.Type == cairn.EventWorkspaceDeleted:
		return entityKey{kind: 'w', id: ev.ID}
	case ev.IsSnapshot():
		return entityKey{kind: 's', id: ev.ID}
	}
	return entityKey{kind: 'a', id: ev.ID}
}

// isDelete reports a frame that removes its entity.
func isDelete(ev cairn.Event) bool {
	switch ev.Type {
	case cairn.EventWorkspaceDeleted, cairn.EventArtifactDeleted, cairn.EventSnapshotDeleted:
		return true
	}
	return false
}

// maxConn and maxNotes bound the kept connection transitions and notes;
// older ones are dropped.
const (
	maxConn  = 16
	maxNotes = 16
)

// maxWarnings bounds the pending warnings; the oldest go first. A
// maintainer pass warns of at most 500 workspaces of each kind.
const maxWarnings = 1024

// warningKey is a warning's kind and workspace: a repeat of one replaces
// it in its place.
type warningKey struct {
	typ cairn.EventType
	id  string
}

// Hub is the mutex-guarded meeting point of the pump and the model.
type Hub struct {
	now     func() time.Time
	pace    time.Duration
	maxKeys int
	notify  chan struct{}

	mu       sync.Mutex
	index    map[entityKey]int
	events   []cairn.Event
	resync   []string
	conn     []Conn
	overflow bool
	progress []Sample
	sampled  map[int]int // transfer → index in progress
	notes    []Note
	files    *Files
	epoch    int
	warnings []cairn.Event
	warned   map[warningKey]int // warning → index in warnings

	lastDelivery time.Time // consumer side only
}

// NewHub returns a hub that delivers at most one batch per pace and keeps at
// most maxKeys entities pending (beyond that it drops them and asks for a
// resync). now stamps batches.
func NewHub(pace time.Duration, maxKeys int, now func() time.Time) *Hub {
	return &Hub{
		now: now, pace: pace, maxKeys: maxKeys,
		notify:  make(chan struct{}, 1),
		index:   make(map[entityKey]int),
		sampled: make(map[int]int),
		warned:  make(map[warningKey]int),
	}
}

func (h *Hub) wake() {
	select {
	case h.notify <- struct{}{}:
	default:
	}
}

// Event merges a change frame: the latest frame of an entity wins. An
// upsert keeps its entity's place; a delete moves to the end, so it follows
// whatever arrived before it.
func (h *Hub) Event(ev cairn.Event) {
	h.mu.Lock()
	k := keyOf(ev)
	i, ok := h.index[k]
	if ok && isDelete(ev) {
		h.events[i] = cairn.Event{} // a blank slot, skipped on delivery
		ok = false
	}
	if ok {
		h.events[i] = ev
	} else if len(h.events) >= h.maxKeys {
		h.overflow = true
	} else {
		h.index[k] = len(h.events)
		h.events = append(h.events, ev)
	}
	h.mu.Unlock()
	h.wake()
}

// Warning records a lifecycle warning frame (cairn.Event.IsWarning) apart
// from the change frames: a repeat of a workspace's warning of one kind
// replaces the pending one in its place; past maxWarnings the oldest is
// dropped.
func (h *Hub) Warning(ev cairn.Event) {
	k := warningKey{typ: ev.Type, id: ev.WorkspaceOf()}
	if k.id == "" {
		k.id = ev.ID
	}
	h.mu.Lock()
	if i, ok := h.warned[k]; ok {
		h.warnings[i] = ev
	} else {
		if len(h.warnings) == maxWarnings {
			h.warnings = append(h.warnings[:0], h.warnings[1:]...)
			for wk, i := range h.warned {
				if i == 0 {
					delete(h.warned, wk)
				} else {
					h.warned[wk] = i - 1
				}
			}
		}
		h.warned[k] = len(h.warnings)
		h.warnings = append(h.warnings, ev)
	}
	h.mu.Unlock()
	h.wake()
}

// Resync asks the model to list again; reasons accumulate until delivered.
func (h *Hub) Resync(reason string) {
	h.mu.Lock()
	h.resync = append(h.resync, reason)
	h.mu.Unlock()
	h.wake()
}

// Conn records a connection transition.
func (h *Hub) Conn(c Conn) {
	h.mu.Lock()
	if len(h.conn) == maxConn {
		h.conn = append(h.conn[:0], h.conn[1:]...)
	}
	h.conn = append(h.conn, c)
	h.mu.Unlock()
	h.wake()
}

// Progress records a transfer's progress; only its latest sample is kept
// until the next delivery. It never blocks: the transfer's goroutine calls
// it from inside the byte copy.
func (h *Hub) Progress(s Sample) {
	if s.At.IsZero() {
		s.At = h.now()
	}
	h.mu.Lock()
	if i, ok := h.sampled[s.Transfer]; ok {
		h.progress[i] = s
	} else {
		h.sampled[s.Transfer] = len(h.progress)
		h.progress = append(h.progress, s)
	}
	h.mu.Unlock()
	h.wake()
}

// Note records a transfer's note. It never blocks: the transfer's
// goroutine calls it.
func (h *Hub) Note(n Note) {
	h.mu.Lock()
	if len(h.notes) == maxNotes {
		h.notes = append(h.notes[:0], h.notes[1:]...)
	}
	h.notes = append(h.notes, n)
	h.mu.Unlock()
	h.wake()
}

// Files records what a files subscription saw, merged with what it
// reported before (Files.merge); a report of another subscription
// replaces what the previous one left pending, which is stale.
func (h *Hub) Files(f Files) {
	h.mu.Lock()
	if h.files == nil || h.files.Watch != f.Watch {
		h.files = &f
	} else {
		h.files.merge(f)
	}
	h.mu.Unlock()
	h.wake()
}

// NewEpoch starts a connection's epoch: what the previous one's pump left
// pending (events, resyncs, transitions) is dropped; transfers' progress and
// notes stay. Call it once that pump has stopped.
func (h *Hub) NewEpoch() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.epoch++
	h.events, h.resync, h.conn, h.overflow, h.files, h.warnings = nil, nil, nil, false, nil, nil
	clear(h.index)
	clear(h.warned)
	return h.epoch
}

func (h *Hub) take() Batch {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := Batch{Resync: h.resync, Conn: h.conn, Progress: h.progress, Notes: h.notes, Files: h.files, Warnings: h.warnings, Epoch: h.epoch}
	h.progress, h.notes, h.files, h.warnings = nil, nil, nil, nil
	clear(h.sampled)
	clear(h.warned)
	for _, ev := range h.events {
		if ev.Type != "" {
			b.Events = append(b.Events, ev)
		}
	}
	if h.overflow {
		b.Events = nil
		b.Resync = append(b.Resync, "events overflow")
	}
	h.events, h.resync, h.conn, h.overflow = nil, nil, nil, false
	clear(h.index)
	return b
}

// Wait blocks until something is pending and the pace since the previous
// delivery has passed, then returns everything pending as one batch. Only
// one goroutine may wait at a time.
func (h *Hub) Wait(ctx context.Context) (Batch, error) {
	for {
		select {
		case <-ctx.Done():
			return Batch{}, ctx.Err()
		case <-h.notify:
		}
		if err := h.pause(ctx); err != nil {
			return Batch{}, err
		}
		b := h.take()
		h.lastDelivery = time.Now()
		if !b.Empty() {
			b.At = h.now()
			return b, nil
		}
	}
}

// pause waits out the rest of the pace since the last delivery, so a burst
// becomes one batch.
func (h *Hub) pause(ctx context.Context) error {
	d := h.pace - time.Since(h.lastDelivery)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
