package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
)

func isMsg[T any](msg tea.Msg) bool {
	_, ok := msg.(T)
	return ok
}

func TestStartListsOnHello(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	h.size(120, 40)
	require.Contains(t, h.header(), "◌ connecting")
	require.False(t, h.m.Store().Seeded(store.Workspaces()), "nothing listed before hello")
	h.hello()
	require.True(t, h.m.Store().Seeded(store.Workspaces()))
	require.Contains(t, h.header(), "● live")
	require.Contains(t, h.view(), "ws-alpha")
}

func TestHelloTimeoutListsThenHelloResyncs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	h.size(120, 40).send(feed.HelloTimeoutMsg{})
	require.Contains(t, h.view(), "ws-alpha")
	require.Contains(t, h.header(), "◌ connecting")
	h.b.World.UpdateWorkspace(a.ID, func(w *cairn.Workspace) { w.Name = "ws-renamed" })
	h.hello()
	require.Contains(t, h.view(), "ws-renamed", "the later hello lists again")
}

func TestEventsUpdateRowsAndKeepTheCursor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-beta", "ws-delta")
	h.key("j")
	require.Equal(t, ws[1].ID, selectedWS(h))
	newer := *ws[1]
	newer.VolumeState = cairn.VolumeReady
	newer.UpdatedAt = newer.UpdatedAt.Add(time.Second)
	h.events(upserted(&cairn.Workspace{ID: "new", Name: "ws-alpha", CreatedAt: newer.CreatedAt, UpdatedAt: newer.UpdatedAt}), upserted(&newer))
	require.Equal(t, ws[1].ID, selectedWS(h), "the cursor is an ID")
	require.Contains(t, h.view(), "● READY")
	require.Contains(t, h.view(), "• ws-alpha", "a new row is marked changed")
	h.clock.Advance(3 * time.Second)
	h.send(tickMsg{gen: h.m.tick.gen, now: h.clock.Now()})
	require.NotContains(t, h.view(), "• ws-alpha", "the highlight ends")
	h.events(cairn.Event{Type: cairn.EventWorkspaceDeleted, ID: ws[1].ID})
	require.Equal(t, ws[0].ID, selectedWS(h), "a removed row's cursor moves to the row taking its index")
}

func selectedWS(h *harness) string {
	w, _ := h.m.stack.Screens()[0].(interface {
		Selected() (*cairn.Workspace, bool)
	}).Selected()
	if w == nil {
		return ""
	}
	return w.ID
}

func TestRestFetchesDetailAndPrefetches(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws := h.seed("ws-alpha", "ws-beta")
	h.b.World.AddArtifact(ws[1].ID, "report_csv", cairn.ArtifactRecorded, 10, "")
	h.b.World.UpdateWorkspace(ws[1].ID, func(w *cairn.Workspace) { w.VolumeState = cairn.VolumeReady })
	h.b.World.SetMounts(ws[1].ID, 3)
	h.key("j")
	require.Positive(t, h.fire(isMsg[screen.RestMsg]))
	n, ok := h.m.Store().Mounts(ws[1].ID)
	require.True(t, ok)
	require.Equal(t, 3, n)
	require.True(t, h.m.Store().Cached(ws[1].ID), "prefetched after the longer rest")
	require.Contains(t, h.view(), "3 running containers")
}

// openArtifacts seeds one workspace with artifacts and opens it.
func openArtifacts(t *testing.T, h *harness, states ...cairn.ArtifactState) (*cairn.Workspace, []*cairn.Artifact) {
	t.Helper()
	ws := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	var arts []*cairn.Artifact
	for i, st := range states {
		arts = append(arts, h.b.World.AddArtifact(ws.ID, fmt.Sprintf("report_%d", i), st, 14336, ""))
	}
	h.size(120, 40).hello()
	h.key("enter")
	require.True(t, h.m.Store().Cached(ws.ID))
	return ws, arts
}

func TestMissingAlerts(t *testing.T) {
	t.Parallel()
	t.Run("FirstListIsSilent", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		openArtifacts(t, h, cairn.ArtifactMissingObject, cairn.ArtifactRecorded)
		require.Empty(t, h.m.notes.Toasts().Log())
		require.Contains(t, h.header(), "! 1 missing")
		require.Contains(t, h.view(), "! MISSING")
	})
	t.Run("OneEventOneWarning", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		_, arts := openArtifacts(t, h, cairn.ArtifactRecorded, cairn.ArtifactRecorded)
		gone := h.b.World.UpdateArtifact(arts[1].ID, func(a *cairn.Artifact) { a.State = cairn.ArtifactMissingObject })
		h.events(artUpserted(gone), upserted(h.worldWS(gone.WorkspaceID)))
		require.Equal(t, "! warning: report_1 in ws-alpha is MISSING_OBJECT — U replaces its content", h.statusLine())
		require.Contains(t, h.header(), "! 1 missing")
		require.Contains(t, h.view(), "• report_1")
		require.Contains(t, h.view(), "! MISSING")
	})
	t.Run("ManyBecomeOneSummary", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		_, arts := openArtifacts(t, h, cairn.ArtifactRecorded, cairn.ArtifactRecorded, cairn.ArtifactRecorded, cairn.ArtifactRecorded, cairn.ArtifactRecorded)
		var evs []cairn.Event
		for _, a := range arts {
			evs = append(evs, artUpserted(h.b.World.UpdateArtifact(a.ID, func(a *cairn.Artifact) { a.State = cairn.ArtifactMissingObject })))
		}
		h.events(append(evs, upserted(h.worldWS(arts[0].WorkspaceID)))...)
		require.Equal(t, "! warning: 5 artifacts became MISSING_OBJECT in 1 workspace — ! for details", h.statusLine())
		require.Len(t, h.m.notes.Toasts().Log(), 6, "each still goes to the log")
		require.Contains(t, h.header(), "! 5 missing")
	})
	t.Run("ResyncFindingNewOnesSummarises", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		_, arts := openArtifacts(t, h, cairn.ArtifactRecorded)
		h.b.World.UpdateArtifact(arts[0].ID, func(a *cairn.Artifact) { a.State = cairn.ArtifactMissingObject })
		h.send(hubMsg{batch: live.Batch{At: h.clock.Now(), Resync: []string{"server resync"}}})
		require.Equal(t, "! warning: 1 artifact became MISSING_OBJECT in 1 workspace — ! for details", h.statusLine())
	})
}

func TestToastExpiresByID(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.seed("ws-alpha")
	h.key("y")
	require.Equal(t, "✓ copied name ws-alpha", h.statusLine())
	require.Equal(t, []string{"ws-alpha"}, h.clip.Copies())
	h.key("Y")
	require.Equal(t, 2, h.fire(named("notice.expireMsg")))
	require.Empty(t, h.statusLine())
}

func TestConnectionStates(t *testing.T) {
	t.Parallel()
	t.Run("ReconnectingThenOfflineThenLive", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ws := h.seed("ws-alpha")
		h.conn(live.Conn{Kind: live.ConnLost, RetryIn: 4 * time.Second, Err: errors.New("reset")})
		require.Contains(t, h.header(), "◌ reconnecting 4s")
		h.b.World.UpdateWorkspace(ws[0].ID, func(w *cairn.Workspace) { w.Name = "changed-meanwhile" })
		h.clock.Advance(31 * time.Second)
		h.send(tickMsg{gen: h.m.tick.gen, now: h.clock.Now()})
		require.Contains(t, h.header(), "✕ offline · now stale")
		require.Contains(t, h.view(), "ws-alpha", "offline keeps the data and never exits")
		h.hello()
		require.Contains(t, h.header(), "● live")
		require.Contains(t, h.view(), "changed-meanwhile", "hello after a loss resyncs")
	})
	t.Run("NoEventsEndpointPolls", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ws := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
		h.size(120, 40)
		h.conn(live.Conn{Kind: live.ConnLost, RetryIn: 30 * time.Second, Unavailable: true})
		require.Contains(t, h.header(), "◐ polling 5s")
		require.Contains(t, h.view(), "ws-alpha", "polling lists at once")
		h.b.World.UpdateWorkspace(ws.ID, func(w *cairn.Workspace) { w.Name = "polled" })
		require.Equal(t, 1, h.fire(named("feed.pollTickMsg")))
		require.Contains(t, h.view(), "polled")
		h.key("?") // a modal pauses polling
		h.b.World.UpdateWorkspace(ws.ID, func(w *cairn.Workspace) { w.Name = "while-modal" })
		require.Equal(t, 1, h.fire(named("feed.pollTickMsg")))
		h.key("esc")
		require.NotContains(t, h.view(), "while-modal")
		h.hello()
		require.Contains(t, h.header(), "● live")
		require.Contains(t, h.view(), "while-modal", "events back: polling stops and a resync runs")
		h.fire(named("feed.pollTickMsg")) // the loop's last tick arrives stale
		require.Zero(t, h.fire(named("feed.pollTickMsg")), "and schedules no other: the poll loop died")
	})
	t.Run("ThreeFailedDialsPollWhileRESTWorks", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.size(120, 40).send(feed.HelloTimeoutMsg{}) // the list works
		for range 2 {
			h.conn(live.Conn{Kind: live.ConnLost, RetryIn: time.Second})
			require.Contains(t, h.header(), "◌ connecting")
		}
		h.conn(live.Conn{Kind: live.ConnLost, RetryIn: time.Second})
		require.Contains(t, h.header(), "◐ polling")
	})
	t.Run("RESTFailingTooIsOffline", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.b.FindWorkspacesFunc = func(context.Context, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
			return nil, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
		}
		h.size(120, 40)
		for range 3 {
			h.conn(live.Conn{Kind: live.ConnLost, RetryIn: time.Second})
		}
		h.send(feed.HelloTimeoutMsg{})
		require.Contains(t, h.header(), "✕ offline")
		require.Contains(t, h.view(), "cannot reach the server — connection refused")
	})
	t.Run("RejectedTokenStops", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.size(120, 40)
		h.conn(live.Conn{Kind: live.ConnStopped, Err: &cairn.Error{Reason: cairn.ReasonUnauthenticated, Status: 401}})
		require.Contains(t, h.header(), "✕ token rejected")
		require.NotContains(t, h.header(), "offline", "a rejected token is its own state")
		require.Equal(t, "✕ error: token rejected — check CAIRN_TOKEN or the config file", h.statusLine())
		h.clock.Advance(5 * time.Minute)
		h.send(tickMsg{gen: h.m.tick.gen, now: h.clock.Now()})
		require.Contains(t, h.header(), "✕ token rejected", "time passing never turns it into offline · stale")
		h.key("r")
		require.Equal(t, feed.Connecting, h.m.feed.Conn().Kind, "r retries")
		require.Contains(t, h.header(), "◌ connecting")
	})
	t.Run("RejectedByRESTToo", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.b.FindWorkspacesFunc = func(context.Context, cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
			return nil, &cairn.Error{Reason: cairn.ReasonUnauthenticated, Status: 401}
		}
		h.size(120, 40)
		for range 3 {
			h.conn(live.Conn{Kind: live.ConnLost, RetryIn: time.Second})
		}
		h.send(feed.HelloTimeoutMsg{})
		require.Contains(t, h.header(), "✕ token rejected")
		require.NotContains(t, h.header(), "offline")
		require.Contains(t, h.view(), "token rejected — check CAIRN_TOKEN or the config file")
	})
	t.Run("ModePollAndOff", func(t *testing.T) {
		t.Parallel()
		for mode, badge := range map[string]string{"poll": "◐ polling 5s", "off": "○ events off"} {
			h := newHarness(t, func(c *config.Config) { c.EventsMode = mode })
			h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
			h.size(120, 40)
			h.run(h.m.Init())
			h.send(feed.StartMsg{})
			require.Contains(t, h.header(), badge)
			require.Contains(t, h.view(), "ws-alpha")
		}
	})
}

func TestListFailureShowsRetry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	fail := true
	h.b.FindWorkspacesFunc = func(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
		if fail {
			return nil, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Status: 503}
		}
		return h.b.Client.FindWorkspaces(ctx, f)
	}
	h.b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	h.size(120, 40).hello()
	require.Contains(t, h.view(), "cannot list workspaces: object store unavailable — try again")
	require.Contains(t, h.view(), "next retry in 2s — r retries now")
	fail = false
	require.Equal(t, 1, h.fire(named("feed.retryListMsg")))
	require.Contains(t, h.view(), "ws-alpha")
}

func TestWorkspaceDeletedRemotelyKeepsArtifactsUnderBanner(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ws, _ := openArtifacts(t, h, cairn.ArtifactRecorded)
	h.events(cairn.Event{Type: cairn.EventWorkspaceDeleted, ID: ws.ID})
	v := h.view()
	require.Contains(t, v, "workspace deleted — only back and copy remain")
	require.Contains(t, v, "report_0")
	h.key("D")
	require.Equal(t, "i workspace deleted", h.statusLine())
	h.key("esc")
	require.Equal(t, 1, h.m.stack.Depth())
	require.True(t, strings.Contains(h.view(), "No workspaces yet"))
}
