package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client/clienttest"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

const touchRoute = "POST /v1/workspaces/{id}/touch"

// lifecycled is ws-alpha listed, its lifecycle set at the epoch to l, and
// its last activity at the epoch; the clock is then a minute on.
func lifecycled(t *testing.T, l cairn.Lifecycle, edit ...func(*config.Config)) (*harness, *cairn.Workspace) {
	t.Helper()
	h := newHarness(t, edit...)
	ws := h.b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
	_, err := h.b.SetWorkspaceLifecycle(ctxBackground(), ws.ID, l)
	require.NoError(t, err)
	h.b.World.UpdateWorkspace(ws.ID, func(x *cairn.Workspace) { x.LastActiveAt = h.clock.Now() })
	h.clock.Advance(time.Minute)
	h.size(120, 40).hello()
	return h, ws
}

// warning is the maintainer's warning typ of a workspace as the events
// stream carries it: with the workspace's row now.
func (h *harness) warning(typ cairn.EventType, id string) cairn.Event {
	return cairn.Event{Type: typ, ID: id, Workspace: h.worldWS(id)}
}

// warnings delivers warning frames as one hub batch, with events.
func (h *harness) warnings(events []cairn.Event, warnings ...cairn.Event) *harness {
	return h.send(hubMsg{batch: live.Batch{At: h.clock.Now(), Epoch: h.m.epoch, Events: events, Warnings: warnings}})
}

func ptr[T any](v T) *T { return &v }

// The maintainer's warnings are warning toasts that say when, and what
// postpones it; each goes to the ! log. A warning and an upsert of its
// workspace in one batch both land; a workspace the batch deleted is not
// warned of; many become one summary; another connection's are dropped.
func TestLifecycleWarnings(t *testing.T) {
	t.Parallel()
	t.Run("Expiring", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(3600))})
		require.Contains(t, h.view(), "EXPIRES")
		h.warnings(nil, h.warning(cairn.EventWorkspaceExpiring, ws.ID))
		want := "workspace ws-alpha expires in 59m — T postpones it by its ttl (1h)"
		require.Equal(t, "! warning: "+want, h.statusLine())
		text, _ := h.lastLog()
		require.Equal(t, want, text)
		h.key("!")
		require.Contains(t, h.view(), want, "the messages log")
	})
	t.Run("Archiving", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{ArchiveIdleAfterSecs: ptr(int64(7200))})
		require.NotContains(t, h.view(), "EXPIRES", "nothing expires")
		h.warnings(nil, h.warning(cairn.EventWorkspaceArchiving, ws.ID))
		require.Equal(t, "! warning: workspace ws-alpha's idle volume will be archived in 1h unless touched — T touches it", h.statusLine())
	})
	t.Run("BesideAnUpsertOfItsWorkspace", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(3600))})
		warned := h.warning(cairn.EventWorkspaceExpiring, ws.ID)
		renamed := h.b.World.UpdateWorkspace(ws.ID, func(x *cairn.Workspace) { x.Name = "ws-renamed" })
		h.warnings([]cairn.Event{upserted(renamed)}, warned)
		require.Contains(t, h.view(), "ws-renamed", "the upsert applied")
		require.Contains(t, h.statusLine(), "workspace ws-renamed expires in 59m", "the warning too, naming it as it is now")
	})
	t.Run("DeletedMeanwhileIsNotWarnedOf", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(3600))})
		h.warnings([]cairn.Event{{Type: cairn.EventWorkspaceDeleted, ID: ws.ID}}, h.warning(cairn.EventWorkspaceExpiring, ws.ID))
		require.Empty(t, h.m.notes.Toasts().Log())
	})
	t.Run("ManyBecomeOneSummary", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		var warns []cairn.Event
		for _, name := range []string{"ws-a", "ws-b", "ws-c"} {
			ws := h.b.World.AddWorkspace(name, cairn.VolumeReady, "")
			warns = append(warns, h.warning(cairn.EventWorkspaceExpiring, ws.ID), h.warning(cairn.EventWorkspaceArchiving, ws.ID))
		}
		h.size(120, 40).hello()
		h.warnings(nil, warns[:5]...)
		require.Equal(t, "! warning: 3 workspaces expire soon, 2 idle volumes will be archived unless touched — ! lists them", h.statusLine())
		require.Len(t, h.m.notes.Toasts().Log(), 6, "each still goes to the log")
	})
	t.Run("ReadOnlyOffersNoKey", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(3600))}, func(c *config.Config) { c.ReadOnly = true })
		h.warnings(nil, h.warning(cairn.EventWorkspaceExpiring, ws.ID))
		require.Equal(t, "! warning: workspace ws-alpha expires in 59m", h.statusLine())
	})
	t.Run("AnotherConnectionsAreDropped", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(3600))})
		h.send(hubMsg{batch: live.Batch{At: h.clock.Now(), Epoch: h.m.epoch - 1, Warnings: []cairn.Event{h.warning(cairn.EventWorkspaceExpiring, ws.ID)}}})
		require.Empty(t, h.m.notes.Toasts().Log())
	})
	t.Run("NameMadeSafe", func(t *testing.T) {
		t.Parallel()
		h, ws := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(3600))})
		ev := h.warning(cairn.EventWorkspaceExpiring, ws.ID)
		// a workspace the store does not know yet is named as the frame names it
		ev.Workspace.ID, ev.ID, ev.Workspace.Name = "unknown", "unknown", "evil\x1b]0;owned\a"
		h.warnings(nil, ev)
		text, _ := h.lastLog()
		require.NotContains(t, text, "\x1b")
		require.Contains(t, text, "workspace evil")
	})
}

// T touches the workspace under the cursor: the server moves its expiry
// by its ttl, and the toast and the row say the new one.
func TestTouch(t *testing.T) {
	t.Parallel()
	t.Run("TTL", func(t *testing.T) {
		t.Parallel()
		h, _ := lifecycled(t, cairn.Lifecycle{TTLSecs: ptr(int64(86400))})
		h.clock.Advance(5 * time.Hour)
		h.send(tickMsg{gen: h.m.tick.gen, now: h.clock.Now()})
		require.Contains(t, h.view(), " in 18h ")
		h.key("T")
		require.Equal(t, 1, h.b.World.Hits(touchRoute))
		require.Equal(t, "✓ touched ws-alpha: it now expires 2025-03-15 14:27 (in 1d)", h.statusLine())
		require.Contains(t, h.view(), " in 1d ", "the row has the new expiry")
	})
	t.Run("FixedExpiry", func(t *testing.T) {
		t.Parallel()
		h, _ := lifecycled(t, cairn.Lifecycle{ExpiresAt: ptr(tuitest.Epoch().Add(48 * time.Hour))})
		h.key("T")
		require.Equal(t, "✓ touched ws-alpha: it still expires 2025-03-16 09:26 (in 1d), a fixed time; its idle clock restarted", h.statusLine())
	})
	t.Run("NoExpiry", func(t *testing.T) {
		t.Parallel()
		h, _ := lifecycled(t, cairn.Lifecycle{})
		h.key("T")
		require.Equal(t, "✓ touched ws-alpha: it does not expire; its idle clock restarted", h.statusLine())
	})
	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		h, _ := lifecycled(t, cairn.Lifecycle{})
		h.b.World.FailNext(touchRoute, 403, cairn.ReasonForbidden)
		h.key("T")
		require.True(t, strings.HasPrefix(h.statusLine(), "✕ error:"), h.statusLine())
	})
	t.Run("ReadOnly", func(t *testing.T) {
		t.Parallel()
		h, _ := lifecycled(t, cairn.Lifecycle{}, func(c *config.Config) { c.ReadOnly = true })
		h.key("T")
		require.Zero(t, h.b.World.Hits(touchRoute))
	})
}

// Over the real pump and the fake server's events stream: a warning sent
// right after an upsert of its workspace (one hub batch, or two) shows
// with the upsert applied.
func TestWireLifecycleWarning(t *testing.T) {
	w := newWire(t, func(s *clienttest.Server, ws *cairn.Workspace) {
		s.UpdateWorkspace(ws.ID, func(x *cairn.Workspace) {
			x.TTLSecs, x.ExpiresAt = ptr(int64(7200)), ptr(time.Now().Add(2*time.Hour))
		})
	})
	w.s.UpdateWorkspace(w.ws.ID, func(x *cairn.Workspace) { x.Description = ptr("described meanwhile") })
	require.True(t, w.s.Warn(w.ws.ID, cairn.EventWorkspaceExpiring))
	w.waitFor("workspace ws-alpha expires in 1h", "described meanwhile")
	w.final()
}
