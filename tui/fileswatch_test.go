package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// deadline bounds every wait on the watch's goroutine: a failure, never
// a pace.
const deadline = 10 * time.Second

// watchedFleet is volumeFleet with scripted files subscriptions, the
// files pane open at the mount root and its subscription.
func watchedFleet(t *testing.T, h *harness) (*cairn.Workspace, <-chan *tuitest.FileStream, *tuitest.FileStream) {
	t.Helper()
	opened := h.b.ScriptFileWatches()
	alpha := volumeFleet(h)
	h.key("f")
	return alpha, opened, nextStream(t, opened)
}

// nextStream is the next files subscription opened.
func nextStream(t *testing.T, opened <-chan *tuitest.FileStream) *tuitest.FileStream {
	t.Helper()
	select {
	case s := <-opened:
		return s
	case <-time.After(deadline):
		t.Fatal("no files subscription was opened")
		return nil
	}
}

// pullFiles delivers the hub's batches, as the program's hub wait does,
// until one carries a files report that done accepts.
func (h *harness) pullFiles(done func(*live.Files) bool) {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	for {
		b, err := h.m.hub.Wait(ctx)
		require.NoError(h.t, err, "no files report came")
		h.send(hubMsg{batch: b})
		if b.Files != nil && done(b.Files) {
			return
		}
	}
}

func stateIs(s live.WatchState) func(*live.Files) bool {
	return func(f *live.Files) bool { return f.State == s }
}

func stale(f *live.Files) bool { return f.Stale }

// liveHello is the subscription's hello, pulled through: the watch is on.
func liveHello(h *harness, s *tuitest.FileStream) {
	s.Send(cairn.Event{Type: cairn.EventHello})
	h.pullFiles(stateIs(live.WatchLive))
}

// staleTimers are the scheduled refreshes of the watched directory.
func staleTimers(h *harness) []timer {
	var out []timer
	for _, tm := range h.timers {
		if isMsg[filesStaleMsg](tm.msg()) {
			out = append(out, tm)
		}
	}
	return out
}

// staleWait is how long the one scheduled refresh waits.
func staleWait(t *testing.T, h *harness) time.Duration {
	t.Helper()
	tms := staleTimers(h)
	require.Len(t, tms, 1, "one refresh scheduled")
	return tms[0].d
}

func changed(paths ...string) cairn.Event {
	ev := cairn.Event{Type: cairn.EventFilesChanged, Cursor: "c.1"}
	for _, p := range paths {
		ev.Changes = append(ev.Changes, cairn.FileChangeNote{Path: p, Op: "created"})
	}
	return ev
}

func TestFilesWatchListsAgainOnChanges(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha, _, s := watchedFleet(t, h)
	require.Equal(t, cairn.EventFilter{WorkspaceID: alpha.ID, Files: cairn.MountPath}, s.Filter, "the workspace's files under the directory shown")
	require.NotContains(t, h.header(), "watching", "no mark before the server says hello")

	t.Log("hello: the watch is on, and the directory is listed again (it may have changed before)")
	liveHello(h, s)
	require.Contains(t, h.header(), "files /mnt/cairn/ws (7) ● watching")
	before := len(listed(h.b))
	require.Equal(t, 1, h.fire(isMsg[filesStaleMsg]))
	require.Equal(t, []string{cairn.MountPath}, listed(h.b)[before:])

	t.Log("a file made in the directory shows without a key press; the cursor stays on its entry")
	filesCursorOn(h, "notes.md")
	h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/added.txt", []byte("by a tool"))
	s.Send(changed("/mnt/cairn/ws/added.txt"))
	h.pullFiles(stale)
	require.NotContains(t, h.view(), "added.txt", "the burst settles first")
	require.Equal(t, 1, h.fire(isMsg[filesStaleMsg]))
	require.Contains(t, h.view(), "added.txt")
	require.Contains(t, h.header(), "files /mnt/cairn/ws (8) ● watching")
	require.Equal(t, "notes.md", selectedEntry(t, h))

	t.Log("a change deeper down marks the entry it is in: listed again too")
	before = len(listed(h.b))
	s.Send(changed("/mnt/cairn/ws/out/logs/run-3.log"))
	h.pullFiles(stale)
	require.Equal(t, 1, h.fire(isMsg[filesStaleMsg]))
	require.Equal(t, []string{cairn.MountPath}, listed(h.b)[before:])
}

func TestFilesWatchCoalescesAndBoundsTheRate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, _, s := watchedFleet(t, h)
	liveHello(h, s)
	require.Len(t, staleTimers(h), 1)
	require.Equal(t, watchSettle, staleWait(t, h), "a burst settles first")

	t.Log("changes while a refresh is scheduled join it")
	for i := range 20 {
		s.Send(changed("/mnt/cairn/ws/f" + string(rune('a'+i))))
	}
	h.pullFiles(stale)
	require.Len(t, staleTimers(h), 1)
	before := len(listed(h.b))
	h.fire(isMsg[filesStaleMsg])
	require.Len(t, listed(h.b)[before:], 1, "one listing for the burst")

	t.Log("the next waits out a second from the last")
	s.Send(changed("/mnt/cairn/ws/again"))
	h.pullFiles(stale)
	require.Len(t, staleTimers(h), 1)
	require.Equal(t, watchEvery, staleWait(t, h), "at most one listing a second")
}

func TestFilesWatchListsALargeDirectoryLessOften(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	opened := h.b.ScriptFileWatches()
	alpha := volumeFleet(h)
	for i := range 2500 {
		h.b.World.PutVolumeFile(alpha.ID, fmt.Sprintf("/mnt/cairn/ws/many/part-%05d.csv", i), nil)
	}
	openFilesAt(h, "/mnt/cairn/ws/many")
	h.key("G", "G") // all three pages listed
	require.Contains(t, h.header(), "(2 500)")
	var s *tuitest.FileStream
	for s == nil || s.Filter.Files != "/mnt/cairn/ws/many" {
		s = nextStream(t, opened)
	}
	liveHello(h, s)
	h.fire(isMsg[filesStaleMsg])
	s.Send(changed("/mnt/cairn/ws/many/part-02500.csv"))
	h.pullFiles(stale)
	require.Equal(t, 3*watchEvery, staleWait(t, h), "a second per page listed")
}

func TestFilesWatchResyncListsAgain(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha, _, s := watchedFleet(t, h)
	liveHello(h, s)
	h.fire(isMsg[filesStaleMsg])
	h.b.World.PutVolumeFile(alpha.ID, "/mnt/cairn/ws/missed.txt", nil)
	s.Send(cairn.Event{Type: cairn.EventFilesResync, Reason: "overflow"})
	h.pullFiles(stale)
	require.Equal(t, 1, h.fire(isMsg[filesStaleMsg]))
	require.Contains(t, h.view(), "missed.txt")
}

func TestFilesWatchIgnoresTheRowFrames(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha, _, s := watchedFleet(t, h)
	liveHello(h, s)
	h.fire(isMsg[filesStaleMsg])
	s.Send(upserted(alpha)) // the subscription carries the workspace's rows too: the pump's
	s.Send(cairn.Event{Type: cairn.EventResync})
	s.Fail(&cairn.DisconnectedError{Err: errors.New("reset")}) // a report after them, to wait for
	h.pullFiles(stateIs(live.WatchLost))
	require.Empty(t, staleTimers(h), "no listing for the rows")
}

func TestFilesWatchReconnects(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, opened, s := watchedFleet(t, h)
	liveHello(h, s)
	h.fire(isMsg[filesStaleMsg])
	s.Fail(&cairn.DisconnectedError{RetryIn: time.Second, Err: errors.New("connection reset")})
	h.pullFiles(stateIs(live.WatchLost))
	require.Contains(t, h.header(), "files /mnt/cairn/ws (7) ◌ watching")
	liveHello(h, s)
	require.Contains(t, h.header(), "● watching", "the same stream redials")
	require.Len(t, staleTimers(h), 1, "listed again: changes of the gap may not all come back")
	require.False(t, s.IsClosed())
	require.Empty(t, opened, "no second subscription")
}

func TestFilesWatchFollowsThePane(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	alpha, opened, root := watchedFleet(t, h)
	liveHello(h, root)

	t.Log("entering a directory moves the subscription there")
	rootWatch := h.m.fw.id
	filesCursorOn(h, "out")
	h.key("enter")
	out := nextStream(t, opened)
	require.Equal(t, cairn.EventFilter{WorkspaceID: alpha.ID, Files: "/mnt/cairn/ws/out"}, out.Filter)
	root.WaitClosed(t, deadline)
	require.NotContains(t, h.header(), "watching", "the new directory is not watched until its hello")

	t.Log("a report of the old subscription is stale, and so is the refresh its hello scheduled")
	before := len(listed(h.b))
	require.Equal(t, 1, h.fire(isMsg[filesStaleMsg]))
	h.m.hub.Files(live.Files{Watch: rootWatch, State: live.WatchLive, Stale: true})
	h.pullFiles(func(*live.Files) bool { return true })
	require.NotContains(t, h.header(), "watching")
	require.Empty(t, staleTimers(h))
	require.Equal(t, before, len(listed(h.b)))

	t.Log("a preview over the pane keeps its subscription")
	liveHello(h, out)
	filesCursorOn(h, "report.csv")
	h.key("p")
	require.Equal(t, 3, h.m.stack.Depth(), "the preview is on top")
	require.False(t, out.IsClosed())
	h.key("esc")

	t.Log("leaving the pane ends it, and nothing else is opened")
	h.key("esc")
	require.Equal(t, 1, h.m.stack.Depth())
	out.WaitClosed(t, deadline)
	require.True(t, h.m.fw.watch.StopWithin(deadline), "every subscription's goroutine ended")
	require.Empty(t, opened)
}

func TestFilesWatchEndsWithTheProgram(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, _, s := watchedFleet(t, h)
	liveHello(h, s)
	h.m.Close()
	s.WaitClosed(t, deadline)
}

func TestFilesWatchUnavailable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, opened, s := watchedFleet(t, h)
	s.Fail(&cairn.DisconnectedError{RetryIn: time.Second, Err: &cairn.Error{Status: 409, Reason: cairn.ReasonWatchUnavailable}})
	h.pullFiles(stateIs(live.WatchRefused))
	require.Equal(t, "i files: live updates unavailable: watch_unavailable — r lists again", h.statusLine())
	s.WaitClosed(t, deadline)
	require.Equal(t, 1, s.Nexts(), "a refusal is not retried")
	require.NotContains(t, h.header(), "watching")

	t.Log("no other directory is subscribed to on this server; r lists as before")
	filesCursorOn(h, "out")
	h.key("enter")
	before := len(listed(h.b))
	h.key("r")
	require.Equal(t, []string{"/mnt/cairn/ws/out"}, listed(h.b)[before:])
	require.True(t, h.m.fw.watch.StopWithin(deadline))
	require.Empty(t, opened, "asked once")
	require.Equal(t, 1, hints(h, "live updates unavailable"))
}

func TestFilesWatchRefusalIsShownOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	_, opened, s := watchedFleet(t, h)
	refuse := func(s *tuitest.FileStream) {
		s.Fail(&cairn.DisconnectedError{RetryIn: time.Second, Err: &cairn.Error{Status: 503, Reason: cairn.ReasonDockerUnavailable}})
		h.pullFiles(stateIs(live.WatchRefused))
		s.WaitClosed(t, deadline)
	}
	refuse(s)
	filesCursorOn(h, "out")
	h.key("enter")
	refuse(nextStream(t, opened)) // another directory asks again: the refusal may have passed
	require.Equal(t, 1, hints(h, "live updates unavailable: docker_unavailable"), "one hint, not a toast per refusal")
}

// hints is how many messages of the log hold text.
func hints(h *harness, text string) int {
	n := 0
	for _, tt := range h.m.notes.Toasts().Log() {
		if strings.Contains(tt.Text, text) {
			n++
		}
	}
	return n
}

func TestFilesWatchNeedsLiveEventsAndAReadyVolume(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		edit func(*config.Config)
		ws   func(*cairn.Workspace)
	}{
		{"PollMode", func(c *config.Config) { c.EventsMode = "poll" }, nil},
		{"VolumeGone", nil, func(w *cairn.Workspace) { w.VolumeState = cairn.VolumeNone }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var edits []func(*config.Config)
			if c.edit != nil {
				edits = append(edits, c.edit)
			}
			h := newHarness(t, edits...)
			opened := h.b.ScriptFileWatches()
			alpha := volumeFleet(h)
			h.key("f")
			filesPane(t, h)
			if c.ws != nil {
				h.b.World.UpdateWorkspace(alpha.ID, c.ws)
				h.events(upserted(h.worldWS(alpha.ID)))
			}
			h.key("r")
			require.True(t, h.m.fw.watch.StopWithin(deadline))
			if c.ws == nil {
				require.Empty(t, opened)
				return
			}
			nextStream(t, opened).WaitClosed(t, deadline) // opened while READY, closed once not
			require.Empty(t, opened)
		})
	}
}
