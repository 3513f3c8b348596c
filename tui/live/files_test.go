package live_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// streams is an events service whose every subscription is a scripted
// stream, handed over as it is opened.
type streams chan *tuitest.FileStream

func (s streams) Events(_ context.Context, f cairn.EventFilter) (cairn.EventStream, error) {
	st := tuitest.NewFileStream(f)
	s <- st
	return st, nil
}

func (s streams) next(t *testing.T) *tuitest.FileStream {
	t.Helper()
	select {
	case st := <-s:
		return st
	case <-time.After(10 * time.Second):
		t.Fatal("no subscription was opened")
		return nil
	}
}

// report waits for the hub's next files report.
func report(t *testing.T, h *live.Hub) live.Files {
	t.Helper()
	for {
		if b := wait(t, h); b.Files != nil {
			return *b.Files
		}
	}
}

func TestTouches(t *testing.T) {
	t.Parallel()
	note := func(p string) []cairn.FileChangeNote { return []cairn.FileChangeNote{{Path: p, Op: "created"}} }
	for p, want := range map[string]bool{
		"/mnt/cairn/ws/out/x":     true,  // an entry
		"/mnt/cairn/ws/out/x/y/z": true,  // deeper: marks x
		"/mnt/cairn/ws/out":       true,  // the directory itself: removed or moved
		"/mnt/cairn/ws/outside":   false, // a sibling sharing the prefix
		"/mnt/cairn/ws":           false, // the parent
	} {
		require.Equal(t, want, live.Touches("/mnt/cairn/ws/out", note(p)), p)
	}
	require.True(t, live.Touches("/mnt/cairn/ws/out/", note("/mnt/cairn/ws/out/x")), "a trailing slash is the same directory")
	require.False(t, live.Touches("/mnt/cairn/ws/out", nil))
}

func TestHubMergesFilesReports(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 10, now)
	h.Files(live.Files{Watch: 1, State: live.WatchDialing})
	h.Files(live.Files{Watch: 1, State: live.WatchLive, Stale: true})
	h.Files(live.Files{Watch: 1, Stale: false})
	require.Equal(t, live.Files{Watch: 1, State: live.WatchLive, Stale: true}, report(t, h),
		"the latest state, staleness kept")
	h.Files(live.Files{Watch: 1, Stale: true})
	h.Files(live.Files{Watch: 2, State: live.WatchDialing})
	require.Equal(t, live.Files{Watch: 2, State: live.WatchDialing}, report(t, h), "another subscription's replaces the old's")
	h.Files(live.Files{Watch: 2, Stale: true})
	h.NewEpoch()
	h.Event(wsEvent("a", 1, "x"))
	require.Nil(t, wait(t, h).Files, "a new epoch drops what the old left")
}

func TestFileWatchReports(t *testing.T) {
	t.Parallel()
	svc := make(streams, 4)
	h := live.NewHub(0, 10, now)
	w := live.NewFileWatch(h)
	defer w.StopWithin(0)
	w.Watch(context.Background(), svc, live.Target{ID: 1, WorkspaceID: "w", Dir: "/mnt/cairn/ws/out"})
	s := svc.next(t)
	require.Equal(t, cairn.EventFilter{WorkspaceID: "w", Files: "/mnt/cairn/ws/out"}, s.Filter)
	require.Equal(t, live.Files{Watch: 1, State: live.WatchDialing}, report(t, h))

	for _, c := range []struct {
		name string
		ev   cairn.Event
		err  error
		want live.Files
	}{
		{"Hello", cairn.Event{Type: cairn.EventHello}, nil, live.Files{Watch: 1, State: live.WatchLive, Stale: true}},
		{"Change", cairn.Event{Type: cairn.EventFilesChanged, Changes: []cairn.FileChangeNote{{Path: "/mnt/cairn/ws/out/a", Op: "written"}}}, nil,
			live.Files{Watch: 1, Stale: true}},
		{"Resync", cairn.Event{Type: cairn.EventFilesResync, Reason: "too_large"}, nil, live.Files{Watch: 1, Stale: true}},
		{"Lost", cairn.Event{}, &cairn.DisconnectedError{Err: errors.New("reset")}, live.Files{Watch: 1, State: live.WatchLost}},
	} {
		if c.err != nil {
			s.Fail(c.err)
		} else {
			s.Send(c.ev)
		}
		require.Equal(t, c.want, report(t, h), c.name)
	}
	require.False(t, s.IsClosed(), "a lost connection is the stream's to redial")
}

// TestFileWatchRefusals: the server's answer ends the subscription, named
// by its reason (or, without cairn's envelope, its status line).
func TestFileWatchRefusals(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, reason string
		err          error
	}{
		{"WatchUnavailable", "watch_unavailable", &cairn.DisconnectedError{Err: &cairn.Error{Status: 409, Reason: cairn.ReasonWatchUnavailable}}},
		{"TokenRejected", "unauthenticated", &cairn.Error{Status: 401, Reason: cairn.ReasonUnauthenticated}},
		{"Proxy", "HTTP 502 Bad Gateway", &cairn.DisconnectedError{Err: &cairn.Error{Status: 502, Message: "HTTP 502 Bad Gateway"}}},
		{"Unknown", "internal", errors.New("not a disconnect")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			svc := make(streams, 4)
			h := live.NewHub(0, 10, now)
			w := live.NewFileWatch(h)
			w.Watch(context.Background(), svc, live.Target{ID: 7, WorkspaceID: "w", Dir: cairn.MountPath})
			s := svc.next(t)
			s.Fail(c.err)
			var got live.Files
			for got.State != live.WatchRefused {
				got = report(t, h)
			}
			require.Equal(t, live.Files{Watch: 7, State: live.WatchRefused, Reason: c.reason}, got)
			require.True(t, w.StopWithin(10*time.Second))
			require.True(t, s.IsClosed())
			require.Equal(t, 1, s.Nexts(), "not retried")
		})
	}
}

func TestFileWatchOneAtATime(t *testing.T) {
	t.Parallel()
	svc := make(streams, 4)
	h := live.NewHub(0, 10, now)
	w := live.NewFileWatch(h)
	ctx := context.Background()
	w.Watch(ctx, svc, live.Target{ID: 2, WorkspaceID: "w", Dir: cairn.MountPath})
	first := svc.next(t)

	t.Log("an older target, its Cmd run late, changes nothing")
	w.Watch(ctx, svc, live.Target{ID: 1, WorkspaceID: "w", Dir: "/mnt/cairn/ws/old"})
	require.False(t, first.IsClosed())

	t.Log("a newer one replaces it; an empty one ends it")
	w.Watch(ctx, svc, live.Target{ID: 3, WorkspaceID: "w", Dir: "/mnt/cairn/ws/out"})
	first.WaitClosed(t, 10*time.Second)
	second := svc.next(t)
	w.Watch(ctx, svc, live.Target{ID: 4})
	second.WaitClosed(t, 10*time.Second)

	t.Log("after StopWithin nothing starts")
	require.True(t, w.StopWithin(10*time.Second))
	w.Watch(ctx, svc, live.Target{ID: 5, WorkspaceID: "w", Dir: cairn.MountPath})
	require.True(t, w.StopWithin(10*time.Second))
	require.Empty(t, svc)
}

func TestFileWatchStopWithinGivesUp(t *testing.T) {
	t.Parallel()
	s := stuck{release: make(chan struct{})}
	h := live.NewHub(0, 10, now)
	w := live.NewFileWatch(h)
	w.Watch(context.Background(), s, live.Target{ID: 1, WorkspaceID: "w", Dir: cairn.MountPath})
	report(t, h) // dialing: the goroutine is about to call Next
	require.False(t, w.StopWithin(10*time.Millisecond), "a stream that ignores its context cannot hold quitting")
	close(s.release)
	require.True(t, w.StopWithin(0))
}
