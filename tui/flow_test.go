package tui

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// flow runs the model the way Run wires it (real pump, hub and timers)
// over the fake backend, in a teatest program at 120×40.
type flow struct {
	t     *testing.T
	tm    *teatest.TestModel
	m     *Model
	b     *tuitest.Backend
	clock *tuitest.Clock
}

func newFlow(t *testing.T, seed func(b *tuitest.Backend), edit ...func(*config.Config)) *flow {
	t.Helper()
	return newFlowWith(t, seed, func(*Options) {}, edit...)
}

// newFlowWith is newFlow with opt editing the model's Options last.
func newFlowWith(t *testing.T, seed func(b *tuitest.Backend), opt func(*Options), edit ...func(*config.Config)) *flow {
	t.Helper()
	clock := tuitest.NewClock(tuitest.Epoch())
	b := tuitest.NewBackend(t, clock)
	if seed != nil {
		seed(b)
	}
	cfg := tuitest.Config()
	for _, e := range edit {
		e(cfg)
	}
	o := Options{Config: cfg, Backend: b, Theme: tuitest.Theme(false), Clock: clock.Now, Clipboard: &tuitest.Clipboard{}}
	opt(&o)
	m, err := New(o)
	require.NoError(t, err)
	t.Cleanup(m.Close)
	return &flow{t: t, tm: teatest.NewTestModel(t, m, teatest.WithInitialTermSize(120, 40)), m: m, b: b, clock: clock}
}

// waitFor synchronises on text appearing in the output; it asserts nothing
// by itself (the final model does).
func (f *flow) waitFor(texts ...string) {
	f.t.Helper()
	teatest.WaitFor(f.t, f.tm.Output(), func(out []byte) bool {
		for _, s := range texts {
			if !bytes.Contains(out, []byte(s)) {
				return false
			}
		}
		return true
	}, teatest.WithDuration(15*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}

func (f *flow) keys(ks ...string) {
	for _, k := range ks {
		f.tm.Send(modeltest.Key(k))
	}
}

// final quits and returns the model as the program left it.
func (f *flow) final() *Model {
	f.t.Helper()
	f.tm.Send(modeltest.Key("ctrl+c"))
	return f.tm.FinalModel(f.t, teatest.WithFinalTimeout(15*time.Second)).(*Model)
}

func TestFlowWorkspaceFilter(t *testing.T) {
	f := newFlow(t, func(b *tuitest.Backend) {
		for _, n := range []string{"ws-alpha", "ws-beta", "ws-gamma"} {
			b.World.AddWorkspace(n, cairn.VolumeNone, "")
		}
	})
	f.waitFor("ws-gamma", "● live")
	f.tm.Type("/ga")
	f.waitFor("/ga 1 of 3")
	f.keys("enter")
	f.waitFor("enter open")
	m := f.final()
	require.Equal(t, "ws-gamma", m.wsName(selectedOf(m)))
	require.False(t, m.stack.Top().Capturing())
	golden.RequireEqual(t, []byte(m.View()))
}

func selectedOf(m *Model) string {
	w, ok := m.stack.Screens()[0].(interface {
		Selected() (*cairn.Workspace, bool)
	}).Selected()
	if !ok {
		return ""
	}
	return w.ID
}

func TestFlowCreateRenameDelete(t *testing.T) {
	f := newFlow(t, nil)
	f.waitFor("No workspaces yet")
	f.tm.Type("n")
	f.waitFor("New workspace")
	f.tm.Type("ws-new")
	f.keys("enter")
	f.waitFor("created ws-new")
	f.tm.Type("e")
	f.waitFor("Edit ws-new")
	f.keys("ctrl+u")
	f.tm.Type("ws-renamed")
	f.keys("enter")
	f.waitFor("renamed ws-new to ws-renamed")
	f.tm.Type("D")
	f.waitFor("Type ws-renamed to confirm")
	f.tm.Type("ws-renamed")
	f.keys("enter")
	f.waitFor("deleted ws-renamed")
	m := f.final()
	require.Zero(t, m.Store().WorkspaceCount())
	left, err := f.b.FindWorkspaces(context.Background(), cairn.WorkspaceFilter{})
	require.NoError(t, err)
	require.Empty(t, left)
}

func TestFlowProvisionEventReady(t *testing.T) {
	release := make(chan struct{})
	f := newFlow(t, func(b *tuitest.Backend) {
		b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	})
	f.b.SetupVolumeFunc = func(ctx context.Context, id string) error {
		f.b.World.UpdateWorkspace(id, func(w *cairn.Workspace) { w.VolumeState = cairn.VolumeReady }) // emits the event
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}
	f.waitFor("ws-alpha", "○ NONE")
	f.tm.Type("v")
	f.waitFor("Provision a volume for ws-alpha")
	f.tm.Type("y")
	f.waitFor("● READY") // from the event while the call still runs: the pending word is gone
	close(release)
	f.waitFor("provisioned a volume for ws-alpha")
	m := f.final()
	var ws *cairn.Workspace
	for _, w := range m.Store().Workspaces() {
		ws = w
	}
	require.Equal(t, cairn.VolumeReady, ws.VolumeState)
	require.Empty(t, m.ops.Tasks())
}

func TestFlowMissingEventWithoutAKey(t *testing.T) {
	var report *cairn.Artifact
	f := newFlow(t, func(b *tuitest.Backend) {
		ws := b.World.AddWorkspace("ws-alpha", cairn.VolumeReady, "")
		report = b.World.AddArtifact(ws.ID, "report_csv", cairn.ArtifactRecorded, 14336, "")
		b.World.AddArtifact(ws.ID, "notes_md", cairn.ArtifactRecorded, 512, "")
	})
	f.waitFor("ws-alpha")
	f.keys("enter")
	f.waitFor("report_csv", "✓ RECORDED")
	// The maintainer flags the object: no key is sent from here on.
	f.b.World.UpdateArtifact(report.ID, func(a *cairn.Artifact) { a.State = cairn.ArtifactMissingObject })
	f.waitFor("! 1 missing", "! warning: report_csv in ws-alpha is MISSING_OBJECT", "• report_csv", "! MISSING")
	m := f.final()
	total, _ := m.Store().MissingTotal()
	require.Equal(t, int64(1), total)
	require.False(t, m.Store().ChangedAt(report.ID).IsZero())
}

func TestFlowReconnectResyncs(t *testing.T) {
	var ws *cairn.Workspace
	f := newFlow(t, func(b *tuitest.Backend) { ws = b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "") })
	f.waitFor("ws-alpha", "● live")
	release := f.b.World.Hold("GET /v1/events") // the redial waits
	f.b.World.DropConnection()
	f.waitFor("◌ reconnecting")
	f.b.World.UpdateWorkspace(ws.ID, func(w *cairn.Workspace) { w.Name = "changed-meanwhile" }) // no event: the socket is down
	release()
	f.waitFor("changed-meanwhile", "● live")
	m := f.final()
	require.Equal(t, feed.Live, m.feed.Conn().Kind)
	require.Equal(t, "changed-meanwhile", m.wsName(ws.ID))
}

func TestFlowResyncFrame(t *testing.T) {
	var ws *cairn.Workspace
	f := newFlow(t, func(b *tuitest.Backend) { ws = b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "") })
	f.waitFor("ws-alpha")
	f.b.World.Unannounced(func() {
		f.b.World.UpdateWorkspace(ws.ID, func(w *cairn.Workspace) { w.Name = "missed-notification" })
	})
	f.b.World.Resync()
	f.waitFor("missed-notification")
	m := f.final()
	require.Equal(t, "missed-notification", m.wsName(ws.ID))
}

func TestFlowEvents404Polls(t *testing.T) {
	var ws *cairn.Workspace
	f := newFlow(t, func(b *tuitest.Backend) {
		b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
		ws = b.World.AddWorkspace("ws-beta", cairn.VolumeNone, "")                     // not under the cursor: only a poll lists it
		b.World.FailEvery("GET /v1/events", http.StatusNotFound, cairn.ReasonInternal) // a server without events
	}, func(c *config.Config) { c.PollInterval = 2 * time.Second })
	f.waitFor("◐ polling 2s", "ws-beta")
	f.b.World.UpdateWorkspace(ws.ID, func(w *cairn.Workspace) { w.Name = "seen-by-polling" })
	f.waitFor("seen-by-polling")
	m := f.final()
	require.Equal(t, feed.Polling, m.feed.Conn().Kind)
}
