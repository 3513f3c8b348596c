package snapshots

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/tuitest"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // goldens show local times
	screentest.Main(m)
}

var alpha = &cairn.Workspace{ID: "w1-0000-0000", Name: "ws-alpha", VolumeState: cairn.VolumeReady,
	CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}

func snap(id, name string, age time.Duration) *cairn.Snapshot {
	by := "ops"
	return &cairn.Snapshot{ID: id, WorkspaceID: alpha.ID, Name: name, Entries: 1204, Bytes: 3 << 20, UploadedBytes: 12 << 10,
		ManifestSHA256: "n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", CreatedBy: &by, CreatedAt: screentest.Epoch.Add(-age)}
}

// open is the screen of ws after Init, its first ListMsg checked; nothing
// listed yet.
func open(t *testing.T, ws *cairn.Workspace) (*Screen, *deps.Deps) {
	t.Helper()
	c, d := screentest.New(t)
	d.SeedWorkspaces(ws)
	s := New(c, ws.ID, 7)
	s.SetSize(160, 30)
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 1, WorkspaceID: ws.ID}}, modeltest.Msgs(s.Init()))
	return s, c
}

func listed(s *Screen, req int, snaps ...*cairn.Snapshot) tea.Cmd {
	_, cmd := s.Update(ListedMsg{Screen: 7, Req: req, Snapshots: snaps})
	return cmd
}

func TestStaleAnswersAreDropped(t *testing.T) {
	t.Parallel()
	s, _ := open(t, alpha)
	other := []*cairn.Snapshot{snap("s9", "other", time.Hour)}
	s.Update(ListedMsg{Screen: 8, Req: 1, Snapshots: other}) // another screen's
	s.Update(ListedMsg{Screen: 7, Req: 0, Snapshots: other}) // an older request's
	require.Equal(t, 0, s.list.Table.Total())
	require.Nil(t, listed(s, 1, snap("s2", "after", time.Hour), snap("s1", "before", 3*time.Hour)))
	sel, ok := s.Selected()
	require.True(t, ok)
	require.Equal(t, "s1", sel.ID, "oldest first")
	require.Equal(t, []string{"ws-alpha", "snapshots (2)"}, s.Crumbs())
}

func TestListsAgain(t *testing.T) {
	t.Parallel()
	s, _ := open(t, alpha)
	_, cmd := s.Update(ChangedMsg{WorkspaceID: alpha.ID})
	require.Nil(t, cmd, "one list at a time")
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 2, WorkspaceID: alpha.ID}}, modeltest.Msgs(listed(s, 1)),
		"then once more: the change may not be in the first")
	listed(s, 2)
	for _, msg := range []tea.Msg{ChangedMsg{WorkspaceID: "w-other"}, screen.RefreshMsg{WorkspaceID: alpha.ID}} {
		_, cmd = s.Update(msg)
		require.Nil(t, cmd, "%#v", msg)
	}
	for i, msg := range []tea.Msg{ChangedMsg{WorkspaceID: alpha.ID}, ChangedMsg{}, screen.RefreshMsg{},
		screen.DataMsg{Changes: store.Changes{Removed: []store.Ref{{Kind: store.KindWorkspace, ID: alpha.ID}}}}} {
		_, cmd = s.Update(msg)
		require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 3 + i, WorkspaceID: alpha.ID}}, modeltest.Msgs(cmd), "%#v", msg)
		listed(s, 3+i)
	}
}

func TestActions(t *testing.T) {
	t.Parallel()
	s, c := open(t, alpha)
	listed(s, 1)
	require.Equal(t, []tea.Msg{screen.ToastMsg{Level: toast.LevelInfo, Text: "no snapshot selected"}},
		modeltest.Msgs(modeltest.Press(s.Update, "R")))
	require.Equal(t, []tea.Msg{ActionMsg{ID: keys.SnapTake, WorkspaceID: alpha.ID}}, modeltest.Msgs(modeltest.Press(s.Update, "n")))
	require.Equal(t, []tea.Msg{ActionMsg{ID: keys.SnapFork, WorkspaceID: alpha.ID}}, modeltest.Msgs(modeltest.Press(s.Update, "F")))
	one := snap("s1", "before", time.Hour)
	listed(s, 1, one)
	for k, id := range map[string]keys.ID{"R": keys.SnapRestore, "D": keys.SnapDelete, "delete": keys.SnapDelete} {
		require.Equal(t, []tea.Msg{ActionMsg{ID: id, WorkspaceID: alpha.ID, Snapshot: one}}, modeltest.Msgs(modeltest.Press(s.Update, k)), k)
	}
	require.Equal(t, []tea.Msg{screen.CopyMsg{Label: "name", Value: "before"}}, modeltest.Msgs(modeltest.Press(s.Update, "y")))
	c.Config.ReadOnly = true
	for _, k := range []string{"n", "R", "F", "D"} {
		require.Empty(t, modeltest.Msgs(modeltest.Press(s.Update, k)), "read-only: %s is hidden", k)
	}
}

func TestVolumeGuards(t *testing.T) {
	t.Parallel()
	none := *alpha
	none.VolumeState = cairn.VolumeNone
	s, _ := open(t, &none)
	listed(s, 1, snap("s1", "before", time.Hour))
	for _, k := range []string{"n", "R", "F"} {
		require.Equal(t, []tea.Msg{screen.ToastMsg{Level: toast.LevelInfo, Text: "needs volume READY — v provisions it"}},
			modeltest.Msgs(modeltest.Press(s.Update, k)), k)
	}
	require.Len(t, modeltest.Msgs(modeltest.Press(s.Update, "D")), 1, "a snapshot outlives its volume: it may go")
}

func TestEmptyStates(t *testing.T) {
	t.Parallel()
	s, c := open(t, alpha)
	require.Contains(t, s.View(), "listing snapshots…")
	listed(s, 1)
	require.Contains(t, s.View(), "No snapshots of ws-alpha yet — n takes one.")
	c.Config.ReadOnly = true
	require.Contains(t, s.View(), "No snapshots of ws-alpha.")

	gone, _ := open(t, alpha)
	gone.Update(ListedMsg{Screen: 7, Req: 1, Err: &cairn.Error{Status: 404, Reason: cairn.ReasonWorkspaceNotFound}})
	require.Contains(t, gone.View(), "cannot list snapshots: ws-alpha no longer exists")
	require.Contains(t, gone.View(), "r retries")
	_, cmd := gone.Update(screen.RefreshMsg{})
	require.Len(t, modeltest.Msgs(cmd), 1)
	listed(gone, 2, snap("s1", "before", time.Hour))
	gone.Update(ListedMsg{Screen: 7, Req: 2, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
	require.Contains(t, gone.View(), "the last list shows", "a failure after a list keeps the rows under a banner")
	require.Equal(t, 1, gone.list.Table.Total())
}

// Untrusted text reaches the terminal as visible escapes: the snapshot's
// name in its row and the detail pane, with its ID, creator and digest,
// the workspace's name in the crumbs, the detail and the empty list.
func TestSanitisedText(t *testing.T) {
	h, shown := screentest.Hostile, screentest.HostileShown
	c, d := screentest.New(t)
	d.SeedWorkspaces(&cairn.Workspace{ID: "w1", Name: "ws" + h, VolumeState: cairn.VolumeReady, CreatedAt: screentest.Epoch,
		UpdatedAt: screentest.Epoch})
	sn := snap("i"+h, "n"+h, time.Hour)
	sn.WorkspaceID, sn.ManifestSHA256 = "w1", "m"+h
	by := "b" + h
	sn.CreatedBy = &by
	s := New(c, "w1", 7)
	s.SetSize(300, 30) // the table's share fits every cell whole
	modeltest.Msgs(s.Init())
	listed(s, 1)
	empty := s.View()
	_, cmd := s.Update(ChangedMsg{})
	listed(s, 2, sn)
	require.Len(t, modeltest.Msgs(cmd), 1)
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: s.list.Table.View(true), Want: []string{"n" + shown}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, sn), "\n"), Want: []string{"snapshot n" + shown, "i" + shown,
			"ws" + shown, "b" + shown, "m" + shown}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{"n" + shown}},
		screentest.Shown{Name: "Empty", Text: empty, Want: []string{"ws" + shown}},
		screentest.Shown{Name: "Crumbs", Text: strings.Join(s.Crumbs(), "\n"), Want: []string{"ws" + shown + "\n"}},
	)
}

// TestViewGoldens renders the empty, loaded and forbidden states at the
// three layout sizes; -update rewrites testdata/TestViewGoldens/….
func TestViewGoldens(t *testing.T) {
	live := snap("00000000-0000-4000-a000-000000000002", "snap-01K2ZZZZZZZZZZZZZZZZZZZZZZ", 20*time.Minute)
	live.Live, live.UploadedBytes, live.Skipped, live.CreatedBy = true, 0, 2, nil
	states := map[string]func(*Screen){
		"empty": func(s *Screen) { listed(s, 1) },
		"loaded": func(s *Screen) {
			listed(s, 1, snap("00000000-0000-4000-a000-000000000001", "before-refactor", 26*time.Hour), live)
		},
		"forbidden": func(s *Screen) {
			s.Update(ListedMsg{Screen: 7, Req: 1, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
		},
	}
	for _, name := range []string{"empty", "loaded", "forbidden"} {
		for _, size := range tuitest.Layouts() {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size.W, size.H), func(t *testing.T) {
				s, _ := open(t, alpha)
				states[name](s)
				s.SetSize(size.W, size.H)
				golden.RequireEqual(t, []byte(strings.Join(s.Crumbs(), " > ")+"\n"+s.View()+"\n"+hints(s)))
			})
		}
	}
}

// hints is the enabled bindings' keys and words, as the hint line offers
// them.
func hints(s *Screen) string {
	var out []string
	for _, b := range s.Keys().Bindings {
		if b.Enabled && b.Scope == keys.ScopeSnapshots {
			out = append(out, b.FirstKey()+" "+b.Short)
		}
	}
	return strings.Join(out, " · ") + "\n"
}
