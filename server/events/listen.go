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
	"github.com/cairn-dev/cairn/server/service"
)

// channel is the notification channel of migrations/0003_events.sql.
const channel = "cairn_events"

// notice is one notification's payload, or, with resync set, the mark of a
// (re)connected LISTEN: what came before it may be lost.
type notice struct {
	service.Change

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
	changes := make([]service.Change, len(notices))
	for i, n := range notices {
		changes[i] = n.Change
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.LoadTimeout)
	rows, err := service.LoadRows(ctx, e.cfg.Store, changes)
	cancel()
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("events: load changed rows; subscribers resync", "err", err)
			e.hub.resyncAll()
		}
		return
	}
	at := cairn.Timestamp(e.cfg.Now())
	for _, n := range notices {
		f, err := frameOf(rows, n, at)
		if err != nil {
			e.log.Error("events: encode frame", "kind", n.Kind, "id", n.ID, "err", err)
			e.hub.resyncAll()
			continue
		}
		e.hub.publish(f)
	}
}

// frameOf is n's change frame.
func frameOf(r *service.Rows, n notice, at time.Time) (*frame, error) {
	ev, err := r.Event(n.Change, at)
	if err != nil {
		return nil, err
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
