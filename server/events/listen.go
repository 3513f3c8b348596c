package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairn-dev/cairn"
)

// channel is the notification channel of migrations/0003_events.sql.
const channel = "cairn_events"

// notice is one notification's payload, or, with resync set, the mark of a
// (re)connected LISTEN: what came before it may be lost.
type notice struct {
	Kind        string `json:"kind"` // workspace | artifact
	Op          string `json:"op"`   // INSERT | UPDATE | DELETE
	ID          string `json:"id"`
	WorkspaceID string `json:"workspace_id"`

	resync   bool
	received time.Time
}

// inbox sits between the LISTEN connection and the loader. The LISTEN loop
// only appends, so it never waits on the database or on subscribers; past
// max pending notices it drops them all and remembers that it did, and the
// loader sends resync in their place.
type inbox struct {
	max  int
	wake chan struct{} // capacity 1: something is pending

	mu      sync.Mutex
	pending []notice
	lost    bool
}

func newInbox(max int) *inbox {
	return &inbox{max: max, wake: make(chan struct{}, 1)}
}

func (b *inbox) put(n notice) {
	b.mu.Lock()
	if len(b.pending) >= b.max {
		b.pending, b.lost = b.pending[:0], true
	}
	b.pending = append(b.pending, n)
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// take removes up to n pending notices, oldest first, and reports whether
// notices were dropped before them.
func (b *inbox) take(n int) ([]notice, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	lost := b.lost
	b.lost = false
	n = min(n, len(b.pending))
	batch := make([]notice, n)
	copy(batch, b.pending)
	b.pending = append(b.pending[:0], b.pending[n:]...)
	return batch, lost
}

// HandleNotification queues one notification (pgxlisten.Handler).
func (e *Events) HandleNotification(ctx context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
	var no notice
	if err := json.Unmarshal([]byte(n.Payload), &no); err != nil {
		return fmt.Errorf("decode notification %q: %w", n.Payload, err)
	}
	no.received = time.Now()
	e.inbox.put(no)
	return nil
}

// HandleBacklog runs each time the LISTEN connection is (re)established
// (pgxlisten.BacklogHandler): notifications sent while it was down are
// gone, so every subscriber will be told to list again, after what the
// loader still holds from the old connection.
func (e *Events) HandleBacklog(context.Context, string, *pgx.Conn) error {
	e.inbox.put(notice{resync: true, received: time.Now()})
	return nil
}

// load turns pending notices into frames, in arrival order, until ctx is
// done. Rows are loaded once per notice, in one query per kind per batch.
func (e *Events) load(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-e.inbox.wake:
		}
		for {
			batch, lost := e.inbox.take(e.cfg.BatchSize)
			if lost {
				e.log.Warn("events: too many pending notifications; subscribers resync")
				e.hub.resyncAll()
			}
			if len(batch) == 0 {
				break
			}
			e.deliver(ctx, batch)
		}
	}
}

// deliver publishes a batch: a resync mark as resync, every other notice as
// its frame.
func (e *Events) deliver(ctx context.Context, batch []notice) {
	for len(batch) > 0 {
		if batch[0].resync {
			e.hub.resyncAll()
			batch = batch[1:]
			continue
		}
		n := 1
		for n < len(batch) && !batch[n].resync {
			n++
		}
		e.publishChanges(ctx, batch[:n])
		batch = batch[n:]
	}
}

// publishChanges loads the rows the notices name and publishes one frame
// per notice. If the rows cannot be loaded, subscribers resync instead.
func (e *Events) publishChanges(ctx context.Context, notices []notice) {
	rows, err := e.loadRows(ctx, notices)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("events: load changed rows; subscribers resync", "err", err)
			e.hub.resyncAll()
		}
		return
	}
	at := cairn.Timestamp(e.cfg.Now())
	for _, n := range notices {
		f, err := rows.frame(n, at)
		if err != nil {
			e.log.Error("events: encode frame", "kind", n.Kind, "id", n.ID, "err", err)
			e.hub.resyncAll()
			continue
		}
		e.hub.publish(f)
	}
}

// rows are the current rows of a batch, by ID.
type rows struct {
	workspaces map[string]*cairn.Workspace
	artifacts  map[string]*cairn.Artifact
}

func (e *Events) loadRows(ctx context.Context, notices []notice) (*rows, error) {
	var wsIDs, artIDs []string
	for _, n := range notices {
		switch {
		case n.Op == "DELETE":
		case n.Kind == "workspace":
			wsIDs = append(wsIDs, n.ID)
		case n.Kind == "artifact":
			artIDs = append(artIDs, n.ID)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.LoadTimeout)
	defer cancel()
	r := &rows{workspaces: map[string]*cairn.Workspace{}, artifacts: map[string]*cairn.Artifact{}}
	if len(wsIDs) > 0 {
		list, err := e.cfg.Store.WorkspacesByID(ctx, wsIDs)
		if err != nil {
			return nil, err
		}
		for _, ws := range list {
			r.workspaces[ws.ID] = ws
		}
	}
	if len(artIDs) > 0 {
		list, err := e.cfg.Store.ArtifactsByID(ctx, artIDs)
		if err != nil {
			return nil, err
		}
		for _, a := range list {
			r.artifacts[a.ID] = a
		}
	}
	return r, nil
}

// frame is the change frame of n: an upsert with the row as loaded, or a
// delete when the row is gone by now.
func (r *rows) frame(n notice, at time.Time) (*frame, error) {
	ev := cairn.Event{ID: n.ID, At: at}
	switch n.Kind {
	case "workspace":
		ev.Type = cairn.EventWorkspaceDeleted
		if ws := r.workspaces[n.ID]; ws != nil && n.Op != "DELETE" {
			ev.Type, ev.Workspace = cairn.EventWorkspaceUpserted, ws
		}
	case "artifact":
		ev.Type = cairn.EventArtifactDeleted
		if a := r.artifacts[n.ID]; a != nil && n.Op != "DELETE" {
			ev.Type, ev.Artifact = cairn.EventArtifactUpserted, a
		}
	default:
		return nil, fmt.Errorf("unknown kind %q", n.Kind)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	return &frame{change: true, workspaceID: n.WorkspaceID, body: body, received: n.received}, nil
}

// logListenError logs what pgxlisten reports (a lost connection, a failed
// reconnect), except the end of the listener itself.
func (e *Events) logListenError(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	e.log.LogAttrs(ctx, slog.LevelWarn, "events: listener", slog.Any("err", err))
}
