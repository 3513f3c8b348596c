package shells

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

// timer is a deps.Deps.After that records each timer and delivers its
// message when the command runs, as tea.Tick would once it fired.
type timer struct{ waits []time.Duration }

func (tm *timer) after(d time.Duration, msg func() tea.Msg) tea.Cmd {
	tm.waits = append(tm.waits, d)
	return func() tea.Msg { return msg() }
}

var alpha = &cairn.Workspace{ID: "w1-0000-0000", Name: "ws-alpha", VolumeState: cairn.VolumeReady,
	CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}

func shell(id, ws string) *cairn.Shell {
	input := screentest.Epoch.Add(-3 * time.Minute)
	return &cairn.Shell{ID: id, WorkspaceID: ws, Container: "cairn-shell-" + id, Instance: "replica-1", State: "running",
		StartedAt: screentest.Epoch.Add(-2 * time.Hour), ExpiresAt: screentest.Epoch.Add(6 * time.Hour),
		TokenName: "ops", Local: true, LastInputAt: &input, ClientAddr: "10.0.0.7:51234"}
}

// open is the screen of wsID ("" for every workspace) after Init, with
// its first ListMsg checked; nothing listed yet.
func open(t *testing.T, wsID string) (*Screen, *deps.Deps, *timer) {
	t.Helper()
	c, d := screentest.New(t)
	tm := &timer{}
	c.After = tm.after
	d.SeedWorkspaces(alpha)
	s := New(c, wsID, 7)
	s.SetSize(160, 30)
	msgs := modeltest.Msgs(s.Init())
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 1, WorkspaceID: wsID}, TickMsg{Screen: 7, Gen: 1}}, msgs)
	require.Equal(t, []time.Duration{Interval}, tm.waits)
	return s, c, tm
}

func listed(s *Screen, req int, shells ...*cairn.Shell) tea.Cmd {
	_, cmd := s.Update(ListedMsg{Screen: 7, Req: req, List: &cairn.ShellList{Enabled: true, Shells: shells}})
	return cmd
}

func TestStaleAnswersAreDropped(t *testing.T) {
	t.Parallel()
	s, _, _ := open(t, "")
	other := &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{shell("S9", alpha.ID)}}
	s.Update(ListedMsg{Screen: 8, Req: 1, List: other}) // another screen's
	s.Update(ListedMsg{Screen: 7, Req: 0, List: other}) // an older request's
	require.Equal(t, 0, s.list.Table.Total())
	require.Nil(t, listed(s, 1, shell("S1", alpha.ID)))
	sh, ok := s.Selected()
	require.True(t, ok)
	require.Equal(t, "S1", sh.ID)
	require.Equal(t, []string{"shells (1)"}, s.Crumbs())
}

func TestTickGenerations(t *testing.T) {
	t.Parallel()
	s, _, tm := open(t, "")
	listed(s, 1)
	_, cmd := s.Update(TickMsg{Screen: 7, Gen: 1})
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 2}, TickMsg{Screen: 7, Gen: 1}}, modeltest.Msgs(cmd), "lists and re-arms")
	listed(s, 2)

	_, cmd = s.Update(TickMsg{Screen: 7, Gen: 0})
	require.Nil(t, cmd, "a stale loop dies")
	_, cmd = s.Update(TickMsg{Screen: 8, Gen: 1})
	require.Nil(t, cmd, "another screen's tick")

	s.Pause()
	_, cmd = s.Update(TickMsg{Screen: 7, Gen: 1})
	require.Nil(t, cmd, "covered: the tick does not re-arm")

	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 3}, TickMsg{Screen: 7, Gen: 3}}, modeltest.Msgs(s.Init()), "on top again")
	_, cmd = s.Update(TickMsg{Screen: 7, Gen: 1})
	require.Nil(t, cmd, "the old loop's tick still on its way is dropped")
	require.Len(t, tm.waits, 3)
}

func TestTickWhileListingWaits(t *testing.T) {
	t.Parallel()
	s, _, _ := open(t, "")
	_, cmd := s.Update(TickMsg{Screen: 7, Gen: 1})
	require.Equal(t, []tea.Msg{TickMsg{Screen: 7, Gen: 1}}, modeltest.Msgs(cmd), "one list at a time")
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 2}}, modeltest.Msgs(listed(s, 1)), "then once more")
	require.Nil(t, listed(s, 2))
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	s, _, _ := open(t, "")
	listed(s, 1, shell("S1", alpha.ID))
	_, cmd := s.Update(screen.RefreshMsg{WorkspaceID: "w-other"})
	require.Nil(t, cmd, "no shell of that workspace is shown")
	_, cmd = s.Update(screen.RefreshMsg{WorkspaceID: alpha.ID})
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 2}}, modeltest.Msgs(cmd))
	listed(s, 2, shell("S1", alpha.ID))
	_, cmd = s.Update(screen.RefreshMsg{})
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 3}}, modeltest.Msgs(cmd))
	listed(s, 3, shell("S1", alpha.ID))
	_, cmd = s.Update(screen.DataMsg{Changes: store.Changes{Updated: []store.Ref{{Kind: store.KindWorkspace, ID: alpha.ID}}}})
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 4}}, modeltest.Msgs(cmd), "an event of a shown workspace")
	listed(s, 4)
	_, cmd = s.Update(screen.DataMsg{Changes: store.Changes{Updated: []store.Ref{{Kind: store.KindWorkspace, ID: alpha.ID}}}})
	require.Nil(t, cmd, "its shells are gone: no longer shown")

	one, _, _ := open(t, alpha.ID)
	listed(one, 1)
	_, cmd = one.Update(screen.RefreshMsg{WorkspaceID: alpha.ID})
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 2, WorkspaceID: alpha.ID}}, modeltest.Msgs(cmd), "its workspace, even with no shell")
	listed(one, 2)
	_, cmd = one.Update(screen.RefreshMsg{WorkspaceID: "w-other"})
	require.Nil(t, cmd)
}

func TestKill(t *testing.T) {
	t.Parallel()
	s, c, _ := open(t, "")
	require.Equal(t, []tea.Msg{screen.ToastMsg{Level: toast.LevelInfo, Text: "no shell selected"}}, modeltest.Msgs(modeltest.Press(s.Update, "D")))
	listed(s, 1, shell("01J2ABCDEFGH", alpha.ID))
	want := KillMsg{ShellID: "01J2ABCDEFGH", WorkspaceID: alpha.ID, Label: "shell 01J2ABCD on ws-alpha"}
	require.Equal(t, []tea.Msg{want}, modeltest.Msgs(modeltest.Press(s.Update, "D")))
	require.Equal(t, []tea.Msg{want}, modeltest.Msgs(modeltest.Press(s.Update, "delete")))
	c.Config.ReadOnly = true
	require.Empty(t, modeltest.Msgs(modeltest.Press(s.Update, "D")), "read-only: kill is hidden")
}

func TestEmptyStates(t *testing.T) {
	t.Parallel()
	s, _, _ := open(t, "")
	require.Contains(t, s.View(), "listing shells…")
	listed(s, 1)
	require.Contains(t, s.View(), "No live shells")
	require.NotContains(t, s.View(), "No live shells on")

	one, _, _ := open(t, alpha.ID)
	listed(one, 1)
	require.Contains(t, one.View(), "No live shells on ws-alpha")
	require.Equal(t, []string{"ws-alpha", "shells (0)"}, one.Crumbs())

	unknown, _, _ := open(t, "0123456789abcdef")
	require.Equal(t, []string{"01234567", "shells"}, unknown.Crumbs(), "an unknown workspace shows its short ID")

	off, _, _ := open(t, "")
	off.Update(ListedMsg{Screen: 7, Req: 1, List: &cairn.ShellList{Shells: []*cairn.Shell{}}})
	require.Contains(t, off.View(), "the server has the shell turned off (shell.enable)")
}

func TestForbidden(t *testing.T) {
	t.Parallel()
	s, _, _ := open(t, "")
	s.Update(ListedMsg{Screen: 7, Req: 1, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
	require.Contains(t, s.View(), "cannot list shells: this token lacks the read scope")
	_, cmd := s.Update(screen.RefreshMsg{})
	require.Equal(t, []tea.Msg{ListMsg{Screen: 7, Req: 2}}, modeltest.Msgs(cmd))
	listed(s, 2, shell("S1", alpha.ID))
	s.Update(ListedMsg{Screen: 7, Req: 2, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
	require.Contains(t, s.View(), "the last list shows", "a failure after a list keeps the rows under a banner")
	require.Equal(t, 1, s.list.Table.Total())
}

// Untrusted text reaches the terminal as visible escapes: the workspace's
// name, the shell ID, container, token and replica in a row; those and the
// client address in the detail pane; the name in the crumbs and in the
// kill confirmation's label.
func TestSanitisedText(t *testing.T) {
	h, shown := screentest.Hostile, screentest.HostileShown
	c, d := screentest.New(t)
	d.SeedWorkspaces(&cairn.Workspace{ID: "w1", Name: "ws" + h, CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch})
	sh := shell("S"+h, "w1")
	sh.Container, sh.TokenName, sh.Instance, sh.ClientAddr, sh.State = "c"+h, "t"+h, "r"+h, "a"+h, "s"+h
	s := New(c, "w1", 7)
	s.SetSize(200, 30)
	modeltest.Msgs(s.Init())
	listed(s, 1, sh)
	every := New(c, "", 8)
	every.SetSize(300, 30) // the table's share fits every cell whole
	modeltest.Msgs(every.Init())
	every.Update(ListedMsg{Screen: 8, Req: 1, List: &cairn.ShellList{Enabled: true, Shells: []*cairn.Shell{sh}}})
	kill := modeltest.Msgs(modeltest.Press(s.Update, "D"))[0].(KillMsg)
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: every.list.Table.View(true), Want: []string{"ws" + shown, "S" + shown, "c" + shown, "t" + shown, "r" + shown}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, sh), "\n"), Want: []string{"shell S" + shown, "ws" + shown,
			"c" + shown, "t" + shown, "r" + shown, "a" + shown, "s" + shown}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{"S" + shown}},
		screentest.Shown{Name: "Crumbs", Text: strings.Join(s.Crumbs(), "\n"), Want: []string{"ws" + shown + "\n"}},
		screentest.Shown{Name: "Label", Text: kill.Label, Want: []string{"on ws" + shown}},
	)
}

// TestViewGoldens renders the empty, loaded and forbidden states at the
// three layout sizes; -update rewrites testdata/TestViewGoldens/….
func TestViewGoldens(t *testing.T) {
	remote := shell("01J2REMOTE00000000000000ZZ", "w-unknown-123456")
	remote.Local, remote.LastInputAt, remote.ClientAddr, remote.Instance, remote.TokenName = false, nil, "", "replica-2", "ci-bot"
	states := map[string]func(*Screen){
		"empty":  func(s *Screen) { listed(s, 1) },
		"loaded": func(s *Screen) { listed(s, 1, shell("01J2AAAAAAAAAAAAAAAAAAAAAA", alpha.ID), remote) },
		"forbidden": func(s *Screen) {
			s.Update(ListedMsg{Screen: 7, Req: 1, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
		},
	}
	for _, name := range []string{"empty", "loaded", "forbidden"} {
		for _, size := range tuitest.Layouts() {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size.W, size.H), func(t *testing.T) {
				s, _, _ := open(t, "")
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
		if b.Enabled && b.Scope == keys.ScopeShells {
			out = append(out, b.FirstKey()+" "+b.Short)
		}
	}
	return strings.Join(out, " · ") + "\n"
}
