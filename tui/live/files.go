package live

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
)

// WatchState is the state of a files subscription.
type WatchState uint8

const (
	// WatchDialing: the subscription is opened; the server has not said
	// hello yet (it starts the workspace's watcher first).
	WatchDialing WatchState = iota + 1
	// WatchLive: the server said hello; changes arrive as they happen.
	WatchLive
	// WatchLost: the connection dropped; the stream redials by itself
	// and resumes from the last files frame.
	WatchLost
	// WatchRefused: the server refused the subscription (Files.Reason);
	// it is not retried.
	WatchRefused
)

// Files is what one files subscription reported since the last delivery.
type Files struct {
	Watch  int        // the subscription: its Target's ID
	State  WatchState // the latest state reported; 0 for none
	Reason string     // WatchRefused: the server's reason
	// Stale says the directory's listing may be out of date: a change
	// touched its entries, the server said changes were missed, or a hello
	// began the watch (what changed before it was not seen).
	Stale bool
}

// merge adds a later report of the same subscription: its state, if it
// has one, replaces the earlier; staleness accumulates.
func (f *Files) merge(later Files) {
	if later.State != 0 {
		f.State, f.Reason = later.State, later.Reason
	}
	f.Stale = f.Stale || later.Stale
}

// Target is the directory to watch. IDs increase with each target the
// model asks for; an empty WorkspaceID watches nothing.
type Target struct {
	ID               int
	WorkspaceID, Dir string
}

// FileWatch owns the files subscription of the directory the files pane
// shows: at most one at a time, each in its own goroutine, writing only
// into the hub. The stream redials a lost connection by itself; a refusal
// (the server has no watcher, the volume is not ready, any other) ends
// the subscription for good, so a server that cannot watch is asked once
// per target, never in a loop.
type FileWatch struct {
	hub *Hub

	mu      sync.Mutex
	latest  int                // the newest target's ID
	cancel  context.CancelFunc // the running subscription's; nil for none
	stopped bool
	running sync.WaitGroup // every subscription's goroutine, ended or ending
}

// NewFileWatch returns a watch writing into hub; it watches nothing until
// Watch. It outlives a context switch, so that quitting waits for the
// goroutines of every server's subscriptions.
func NewFileWatch(hub *Hub) *FileWatch {
	return &FileWatch{hub: hub}
}

// Watch makes t, subscribed to through svc, the subscription: the running
// one is cancelled (its goroutine not awaited) and t's begins, unless t
// watches nothing. A target older than one already applied is ignored,
// since the model's Cmds may run in any order; so is every call after
// StopWithin.
func (w *FileWatch) Watch(ctx context.Context, svc cairn.EventService, t Target) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped || t.ID < w.latest {
		return
	}
	w.latest = t.ID
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	if t.WorkspaceID == "" {
		return
	}
	ctx, w.cancel = context.WithCancel(ctx)
	w.running.Add(1)
	go func() {
		defer w.running.Done()
		w.run(ctx, svc, t)
	}()
}

// StopWithin ends the subscription and waits at most d for every
// goroutine a subscription ran in (0: as long as it takes); false when
// one did not end in time. Safe to call twice.
func (w *FileWatch) StopWithin(d time.Duration) bool {
	w.mu.Lock()
	w.stopped = true
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		w.running.Wait()
		close(ended)
	}()
	if d <= 0 {
		<-ended
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ended:
		return true
	case <-t.C:
		return false
	}
}

// run reads one subscription until ctx ends or the server refuses it.
func (w *FileWatch) run(ctx context.Context, svc cairn.EventService, t Target) {
	report := func(f Files) {
		f.Watch = t.ID
		w.hub.Files(f)
	}
	report(Files{State: WatchDialing})
	stream, err := svc.Events(ctx, cairn.EventFilter{WorkspaceID: t.WorkspaceID, Files: t.Dir})
	if err != nil {
		report(refusal(err))
		return
	}
	defer func() { _ = stream.Close() }() // nothing to report at the end
	for {
		ev, err := stream.Next(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			if f, ok := filesReport(ev, t.Dir); ok {
				report(f)
			}
		case redialed(err):
			report(Files{State: WatchLost})
		default:
			report(refusal(err))
			return
		}
	}
}

// redialed reports a lost connection the stream redials by itself: a
// disconnect that is not the server's answer. A server's answer (a
// *cairn.Error, wrapped in the disconnect or not) is a refusal.
func redialed(err error) bool {
	_, lost := errors.AsType[*cairn.DisconnectedError](err)
	_, answered := errors.AsType[*cairn.Error](err)
	return lost && !answered
}

// refusal is the report of a subscription the server refused (or that
// failed in a way the stream does not retry). An answer without cairn's
// envelope (a proxy's) has no reason: its status names it.
func refusal(err error) Files {
	reason := string(cairn.ErrorReason(err))
	if e, ok := errors.AsType[*cairn.Error](err); ok && reason == "" {
		reason = e.Message
	}
	return Files{State: WatchRefused, Reason: reason}
}

// filesReport is what a frame says about the directory dir; false when
// nothing. The workspace's row frames, which this subscription carries
// too, are the pump's business.
func filesReport(ev cairn.Event, dir string) (Files, bool) {
	switch ev.Type {
	case cairn.EventHello:
		return Files{State: WatchLive, Stale: true}, true
	case cairn.EventFilesResync:
		return Files{Stale: true}, true
	case cairn.EventFilesChanged:
		return Files{Stale: true}, Touches(dir, ev.Changes)
	}
	return Files{}, false
}

// Touches reports whether a change concerns the listing of dir: one under
// it marks the entry it is in (a change of dir/x, or deeper of dir/x/y,
// marks x), and one of dir itself (removed, moved away) leaves nothing to
// list.
func Touches(dir string, changes []cairn.FileChangeNote) bool {
	dir = strings.TrimSuffix(dir, "/")
	for _, c := range changes {
		if c.Path == dir || strings.HasPrefix(c.Path, dir+"/") {
			return true
		}
	}
	return false
}
