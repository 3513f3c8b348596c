package feed

import (
	"context"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// host is the feed's Host in these tests: it counts changes and keeps no
// screens.
type host struct {
	clock   *tuitest.Clock
	id      int
	changes int
}

func (h *host) NextID() int                               { h.id++; return h.id }
func (h *host) Now() time.Time                            { return h.clock.Now() }
func (h *host) Changed(store.Changes, Origin) tea.Cmd     { h.changes++; return nil }
func (h *host) ErrorToast(error, errtext.Subject) tea.Cmd { return nil }
func (h *host) Scopes() []store.Scope                     { return []store.Scope{store.Workspaces()} }
func (h *host) Paused() bool                              { return false }
func (h *host) FirstList() tea.Cmd                        { return nil }

func setup(t *testing.T) (*Feed, *tuitest.Backend, *store.Store) {
	t.Helper()
	clock := tuitest.NewClock(tuitest.Epoch())
	b := tuitest.NewBackend(t, clock)
	st := store.New(1000)
	c := &deps.Deps{Config: tuitest.Config(), After: func(time.Duration, func() tea.Msg) tea.Cmd { return nil }}
	pump := live.NewPump(b, live.NewHub(50*time.Millisecond, 100, clock.Now), clock.Now)
	return New(context.Background(), c, &host{clock: clock}, b, pump, st, clock.Now), b, st
}

// drain runs cmd and every Cmd the messages it yields lead to.
func drain(f *Feed, cmd tea.Cmd) {
	queue := modeltest.Msgs(cmd)
	for len(queue) > 0 {
		msg := queue[0]
		queue = queue[1:]
		next, _ := f.Update(msg)
		queue = append(queue, modeltest.Msgs(next)...)
	}
}

func TestStaleRepliesDropped(t *testing.T) {
	t.Parallel()
	f, b, st := setup(t)
	w := b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	drain(f, f.Resync())
	_, ok := st.Workspace(w.ID)
	require.True(t, ok)

	f.Update(listPageMsg{scope: store.Workspaces(), reqID: -1, gen: 1, ws: []*cairn.Workspace{{ID: "x", Name: "ghost"}}})
	_, ok = st.Workspace("x")
	require.False(t, ok, "a page of no current request is dropped")

	f.Update(entityMsg{id: w.ID, reqID: 100, detail: &cairn.WorkspaceDetail{Workspace: w, MountCount: 2}})
	f.Update(entityMsg{id: w.ID, reqID: 99, detail: &cairn.WorkspaceDetail{Workspace: w, MountCount: 7}})
	n, _ := st.Mounts(w.ID)
	require.Equal(t, 2, n, "an older GET does not overwrite a newer one")
}

func TestResyncDuringResyncRunsOnceMore(t *testing.T) {
	t.Parallel()
	f, b, _ := setup(t)
	b.World.AddWorkspace("ws-alpha", cairn.VolumeNone, "")
	drain(f, f.Resync()) // the first list
	var calls int
	b.FindWorkspacesFunc = func(ctx context.Context, flt cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
		calls++
		return b.Client.FindWorkspaces(ctx, flt)
	}
	first := f.Resync()
	require.NotNil(t, first)
	require.True(t, f.Resyncing())
	require.Nil(t, f.Resync(), "a trigger during a resync only sets again")
	require.True(t, f.resync.again)
	drain(f, first)
	require.Equal(t, 2, calls, "the resync, then once more")
	require.False(t, f.resync.again)
	require.False(t, f.Resyncing())
}
