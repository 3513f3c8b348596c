package audit

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // goldens show local times
	screentest.Main(m)
}

var alpha = &cairn.Workspace{ID: "w1-0000-0000", Name: "ws-alpha", CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch}

// events is n events newest first, from ID prefix p, a minute apart.
func events(p string, from, n int) []*cairn.AuditEvent {
	actor := "ops"
	out := make([]*cairn.AuditEvent, n)
	for i := range out {
		k := from + i
		out[i] = &cairn.AuditEvent{ID: fmt.Sprintf("%s%05d", p, 99999-k), Type: cairn.AuditRenameWorkspace, Actor: &actor,
			Metadata: map[string]any{"workspace_id": alpha.ID, "request_id": "req-" + fmt.Sprint(k),
				"old_workspace_name": "a", "new_workspace_name": "b"},
			CreatedAt: screentest.Epoch.Add(-time.Duration(k) * time.Minute)}
	}
	return out
}

func open(t *testing.T, wsID string) *Screen {
	t.Helper()
	c, d := screentest.New(t)
	d.SeedWorkspaces(alpha)
	s := New(c, wsID, 7)
	s.SetSize(160, 30)
	require.Equal(t, ListMsg{Screen: 7, Req: 1, WorkspaceID: wsID}, s.Init()())
	return s
}

func page(s *Screen, req, offset int, evs []*cairn.AuditEvent) tea.Cmd {
	_, cmd := s.Update(PageMsg{Screen: 7, Req: req, Offset: offset, Events: evs})
	return cmd
}

func TestFilterIsNewestFirstPaged(t *testing.T) {
	t.Parallel()
	m := ListMsg{WorkspaceID: "w", Types: []cairn.AuditType{cairn.AuditShellOpened}, Offset: 400}
	require.Equal(t, cairn.AuditFilter{WorkspaceID: "w", Types: m.Types, Newest: true, Page: cairn.Page{Offset: 400, Limit: PageSize}}, m.Filter())
}

func TestStaleAndOtherScreensPagesAreDropped(t *testing.T) {
	t.Parallel()
	s := open(t, "")
	s.Update(PageMsg{Screen: 8, Req: 1, Events: events("X", 0, 3)})
	s.Update(PageMsg{Screen: 7, Req: 0, Events: events("X", 0, 3)})
	require.Equal(t, 0, s.list.Table.Total())
	require.Nil(t, page(s, 1, 0, events("E", 0, 2)))
	ev, _ := s.Selected()
	require.Equal(t, "E99999", ev.ID, "newest first")
	require.Equal(t, []string{"audit (2)"}, s.Crumbs())
}

func TestPagingAsTheCursorNearsTheEnd(t *testing.T) {
	t.Parallel()
	s := open(t, alpha.ID)
	require.Nil(t, page(s, 1, 0, events("E", 0, PageSize)), "a full page waits for the cursor")
	require.Contains(t, s.View(), "more events: moving down lists the next 200")
	require.Equal(t, []string{"ws-alpha", "audit (200+)"}, s.Crumbs())
	require.Nil(t, modeltest.Msg(modeltest.Press(s.Update, "j")), "far from the end")
	require.Equal(t, ListMsg{Screen: 7, Req: 1, WorkspaceID: alpha.ID, Offset: PageSize}, modeltest.Msg(modeltest.Press(s.Update, "G")))
	require.Nil(t, modeltest.Msg(modeltest.Press(s.Update, "k")), "one page at a time")
	require.Nil(t, page(s, 1, PageSize, events("E", PageSize, 5)), "a short page is the last")
	require.Equal(t, PageSize+5, s.list.Table.Total())
	require.NotContains(t, s.View(), "more events")
}

func TestHeldAtMost(t *testing.T) {
	t.Parallel()
	s := open(t, "")
	for off := 0; off < MaxEvents; off += PageSize {
		require.Nil(t, page(s, 1, off, events("E", off, PageSize)), "the next page waits for the cursor")
		cmd := modeltest.Press(s.Update, "G") // the cursor keeps near the end
		if off+PageSize < MaxEvents {
			require.Equal(t, ListMsg{Screen: 7, Req: 1, Offset: off + PageSize}, modeltest.Msg(cmd))
		} else {
			require.Nil(t, cmd, "no page past the bound")
		}
	}
	s.SetSize(160, 30)
	require.Contains(t, s.View(), "only the newest 10 000 events are held here")
}

func TestTypeCycle(t *testing.T) {
	t.Parallel()
	s := open(t, "")
	page(s, 1, 0, events("E", 0, 3))
	require.Equal(t, ListMsg{Screen: 7, Req: 2, Types: []cairn.AuditType{Types[0]}}, modeltest.Msg(modeltest.Press(s.Update, "T")))
	require.Equal(t, 0, s.list.Table.Total(), "the old type's rows go")
	require.Equal(t, []string{"audit NEW_WORKSPACE"}, s.Crumbs())
	page(s, 2, 0, nil)
	require.Contains(t, s.View(), "No audit events of type NEW_WORKSPACE — T shows another type")
	for i := 1; i < len(Types); i++ {
		require.Equal(t, []cairn.AuditType{Types[i]}, modeltest.Msg(modeltest.Press(s.Update, "T")).(ListMsg).Types)
	}
	back := modeltest.Msg(modeltest.Press(s.Update, "T")).(ListMsg)
	require.Nil(t, back.Types, "after the last type, every type again")
	require.Equal(t, 2+len(Types), back.Req)
}

func TestRefreshKeepsTheCursor(t *testing.T) {
	t.Parallel()
	s := open(t, alpha.ID)
	page(s, 1, 0, events("E", 0, 5))
	modeltest.Msg(modeltest.Press(s.Update, "j"))
	modeltest.Msg(modeltest.Press(s.Update, "j"))
	kept, _ := s.Selected()
	_, cmd := s.Update(screen.RefreshMsg{WorkspaceID: "w-other"})
	require.Nil(t, cmd, "another workspace's")
	_, cmd = s.Update(screen.DataMsg{Changes: store.Changes{Updated: []store.Ref{{Kind: store.KindArtifact, ID: "a1", WorkspaceID: alpha.ID}}}})
	require.Equal(t, ListMsg{Screen: 7, Req: 2, WorkspaceID: alpha.ID}, modeltest.Msg(cmd), "an event of its workspace")
	_, cmd = s.Update(screen.RefreshMsg{WorkspaceID: alpha.ID})
	require.Nil(t, cmd, "one listing at a time")
	newer := append(events("N", -2, 2), events("E", 0, 5)...)
	require.Equal(t, ListMsg{Screen: 7, Req: 3, WorkspaceID: alpha.ID}, modeltest.Msg(page(s, 2, 0, newer)), "the refresh that waited")
	page(s, 3, 0, newer)
	ev, _ := s.Selected()
	require.Equal(t, kept.ID, ev.ID, "the cursor stays on its event")
	require.Equal(t, 7, s.list.Table.Total())
}

func TestForbidden(t *testing.T) {
	t.Parallel()
	s := open(t, "")
	s.Update(PageMsg{Screen: 7, Req: 1, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
	require.Contains(t, s.View(), "the audit trail needs the admin scope — this token lacks it")
	s.Update(screen.RefreshMsg{})
	page(s, 2, 0, events("E", 0, 1))
	require.NotContains(t, s.View(), "admin scope")
}

// Untrusted text reaches the terminal as visible escapes: the type, actor,
// workspace name, request ID and summary in a row; every metadata key and
// value in the detail pane.
func TestSanitisedText(t *testing.T) {
	h, shown := screentest.Hostile, screentest.HostileShown
	c, d := screentest.New(t)
	d.SeedWorkspaces(&cairn.Workspace{ID: "w1", Name: "ws" + h, CreatedAt: screentest.Epoch, UpdatedAt: screentest.Epoch})
	actor := "t" + h
	ev := &cairn.AuditEvent{ID: "E" + h, Type: cairn.AuditType("T" + h), Actor: &actor, CreatedAt: screentest.Epoch,
		Metadata: map[string]any{"workspace_id": "w1", "request_id": h, "k" + h: "v" + h, "n": map[string]any{"x": h}}}
	s := New(c, "", 7)
	s.SetSize(400, 30)
	s.Init()
	s.Update(PageMsg{Screen: 7, Req: 1, Events: []*cairn.AuditEvent{ev}})
	screentest.RequireAllShown(t,
		screentest.Shown{Name: "Row", Text: s.list.Table.View(true), Want: []string{"Ta^[[31mb^Gc", "ta^[[31mb^Gc", "ws" + shown,
			" a^[[31mb ", "k" + shown + "=v" + shown}},
		screentest.Shown{Name: "Detail", Text: strings.Join(Detail(c, ev, 60), "\n"), Want: []string{"T" + shown, "E" + shown,
			"t" + shown, "ws" + shown, "k" + shown, "v" + shown, shown}},
		screentest.Shown{Name: "View", Text: s.View(), Want: []string{"T" + shown}},
	)
}

// TestViewGoldens renders the empty, loaded and forbidden states at the
// three layout sizes; -update rewrites testdata/TestViewGoldens/….
func TestViewGoldens(t *testing.T) {
	loaded := events("E", 0, 3)
	loaded[1].Actor, loaded[1].Type = nil, cairn.AuditNewWorkspace
	loaded[1].Metadata = map[string]any{"workspace_id": "w-unknown-123456", "workspace_name": "made-by-hand"}
	states := map[string]func(*Screen){
		"empty":  func(s *Screen) { page(s, 1, 0, nil) },
		"loaded": func(s *Screen) { page(s, 1, 0, loaded) },
		"forbidden": func(s *Screen) {
			s.Update(PageMsg{Screen: 7, Req: 1, Err: &cairn.Error{Status: 403, Reason: cairn.ReasonForbidden}})
		},
	}
	for _, name := range []string{"empty", "loaded", "forbidden"} {
		for _, size := range tuitest.Layouts() {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size.W, size.H), func(t *testing.T) {
				s := open(t, "")
				states[name](s)
				s.SetSize(size.W, size.H)
				golden.RequireEqual(t, []byte(strings.Join(s.Crumbs(), " > ")+"\n"+s.View()+"\n"))
			})
		}
	}
}
