// Package shells is the live shells screen: every shell container of the
// app on every replica (GET /v1/shells), or those of one workspace, with
// its workspace, container, age, idle time and the token that opened it; D
// asks the root to kill one.
//
// The screen does no I/O. It asks the root to list (ListMsg) and takes the
// answer (ListedMsg); an answer for another screen or an older request is
// dropped. It lists again on screen.RefreshMsg for "" or a workspace it
// shows, on store changes to those workspaces, and every Interval while it
// is the visible screen.
//
// The Interval loop is a TickMsg the screen schedules for itself through
// deps.Deps.After, carrying a generation. A tick re-lists and re-arms only
// when its generation is the current one and the screen is not paused, so
// the loop stops when the root covers the screen (the root gives unknown
// messages to the top screen only, so the covered screen never sees its
// tick; Pause makes that explicit) or pops it (the tick reaches nobody who
// wants it). Init starts the loop again with a new generation, dropping any
// tick of the old one still on its way: the root calls it when the screen
// is pushed and each time it is on top again.
package shells

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
)

// Interval is how often the visible screen lists again.
const Interval = 5 * time.Second

// ListMsg asks the root to run FindShells(WorkspaceID) ("" for every
// workspace) and answer with a ListedMsg carrying the same Screen and Req.
type ListMsg struct {
	Screen, Req int
	WorkspaceID string
}

// ListedMsg is the root's answer to a ListMsg.
type ListedMsg struct {
	Screen, Req int
	List        *cairn.ShellList
	Err         error
}

// KillMsg asks the root to confirm and kill a shell (KillShell), then to
// broadcast screen.RefreshMsg{WorkspaceID}. Label names the shell for the
// confirmation, sanitised: "shell 01J2… on ws-alpha".
type KillMsg struct {
	ShellID, WorkspaceID, Label string
}

// OpenMsg asks the root to open the shell: as its writer when this TUI
// holds its secret (a v2 shell it created), else to watch it read-only.
type OpenMsg struct {
	ShellID, WorkspaceID string
}

// TickMsg is the screen's own Interval timer; Gen names the loop.
type TickMsg struct{ Screen, Gen int }

var _ screen.Screen = (*Screen)(nil)

// Screen lists live shells.
type Screen struct {
	c      *deps.Deps
	id     int
	wsID   string // "" for every workspace
	wsName string // sanitised
	list   *pane.List[*row]

	req     int
	loading bool
	again   bool // a refresh came while a list ran: list once more
	listed  bool
	enabled bool // the server's shell.enable, as last listed
	err     error
	shells  []*cairn.Shell

	gen    int
	paused bool
}

// New returns the shells of workspace wsID ("" for every workspace); id
// tells its answers apart from another screen's. Init lists and starts the
// loop.
func New(c *deps.Deps, wsID string, id int) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c, wsID == ""))
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	tbl.SetSort(byStart, false)
	s := &Screen{c: c, id: id, wsID: wsID, list: pane.New(c, tbl), enabled: true}
	s.wsName = workspaceName(c, wsID)
	return s
}

// Init lists now and (re)starts the Interval loop with a new generation:
// call it when the screen is pushed and whenever it is on top again.
func (s *Screen) Init() tea.Cmd {
	s.paused = false
	s.gen++
	return tea.Batch(s.request(), s.arm())
}

// Pause stops the loop: the next tick is stale. Init restarts it.
func (s *Screen) Pause() {
	s.paused = true
	s.gen++
}

// ID is the screen's, as its requests carry it.
func (s *Screen) ID() int { return s.id }

// WorkspaceID is the workspace shown, "" for every one.
func (s *Screen) WorkspaceID() string { return s.wsID }

// Selected is the shell under the cursor.
func (s *Screen) Selected() (*cairn.Shell, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil, false
	}
	return r.sh, true
}

func (s *Screen) arm() tea.Cmd {
	screen, gen := s.id, s.gen
	return s.c.After(Interval, func() tea.Msg { return TickMsg{Screen: screen, Gen: gen} })
}

// request asks for a list unless one runs; then it asks once more when
// that one is answered.
func (s *Screen) request() tea.Cmd {
	if s.loading {
		s.again = true
		return nil
	}
	s.req++
	s.loading, s.again = true, false
	return screen.Send(ListMsg{Screen: s.id, Req: s.req, WorkspaceID: s.wsID})
}

// Refresh lists again.
func (s *Screen) Refresh() tea.Cmd { return s.request() }

// Update handles keys, answers, ticks and refreshes.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	return s, s.update(msg)
}

func (s *Screen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s.key(msg)
	case ListedMsg:
		if msg.Screen == s.id && msg.Req == s.req {
			return s.listedMsg(msg)
		}
	case TickMsg:
		if msg.Screen == s.id && msg.Gen == s.gen && !s.paused {
			return tea.Batch(s.request(), s.arm())
		}
	case screen.RefreshMsg:
		if msg.WorkspaceID == "" || s.shows(msg.WorkspaceID) {
			return s.request()
		}
	case screen.DataMsg:
		return s.data(msg.Changes)
	case screen.BackMsg:
		return s.list.Back()
	}
	return nil
}

// shows reports whether workspace id's shells are on this screen: the one
// it is scoped to, or one of a listed shell.
func (s *Screen) shows(id string) bool {
	if s.wsID != "" {
		return id == s.wsID
	}
	for _, sh := range s.shells {
		if sh.WorkspaceID == id {
			return true
		}
	}
	return false
}

// data re-reads workspace names and lists again when a shown workspace
// changed (a shell opening or ending moves its mount count).
func (s *Screen) data(ch store.Changes) tea.Cmd {
	s.wsName = workspaceName(s.c, s.wsID)
	s.setRows()
	for _, refs := range [][]store.Ref{ch.Added, ch.Updated, ch.Removed} {
		for _, ref := range refs {
			if ref.Kind == store.KindWorkspace && s.shows(ref.ID) {
				return s.request()
			}
		}
	}
	return nil
}

func (s *Screen) listedMsg(msg ListedMsg) tea.Cmd {
	s.loading = false
	if msg.Err != nil {
		s.err = msg.Err
	} else {
		s.err, s.listed = nil, true
		s.enabled = msg.List.Enabled
		s.shells = msg.List.Shells
		s.setRows()
	}
	if s.again {
		return s.request()
	}
	return nil
}

func (s *Screen) setRows() {
	s.list.Table.SetRows(pane.Rows(s.shells, func(sh *cairn.Shell) *row { return newRow(s.c, sh) }))
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeShells)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, _ := s.list.Nav(id); handled {
		return nil
	}
	r, _ := s.list.Table.Cursor()
	switch id {
	case keys.Open:
		return screen.Send(OpenMsg{ShellID: r.sh.ID, WorkspaceID: r.sh.WorkspaceID})
	case keys.ShellKill:
		return screen.Send(KillMsg{ShellID: r.sh.ID, WorkspaceID: r.sh.WorkspaceID, Label: r.label()})
	case keys.BackNav:
		return screen.Send(screen.NavMsg{Kind: screen.NavPop})
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "container", Value: r.sh.Container})
	case keys.CopyID:
		return screen.Send(screen.CopyMsg{Label: "shell ID", Value: r.sh.ID})
	}
	return nil
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is the workspaces, for their names: resync and polling keep
// them current.
func (s *Screen) Scopes() []store.Scope { return []store.Scope{store.Workspaces()} }

// DetailFocused reports whether the detail pane has the focus.
func (s *Screen) DetailFocused() bool { return s.list.DetailFocused() }

// workspaceName is the workspace's sanitised name, or its short ID when the
// store does not know it; "" for "".
func workspaceName(c *deps.Deps, id string) string {
	if w, ok := c.Data.Store().Workspace(id); ok {
		return termkit.Sanitize(w.Name)
	}
	return ShortID(id)
}

// ShortID is the first 8 characters of an ID, sanitised.
func ShortID(id string) string {
	if len(id) > 8 {
		id = id[:8]
	}
	return termkit.Sanitize(id)
}

// Revisit is the screen on top again (the one above it popped): its
// refresh loop, stopped while covered, starts anew.
func (s *Screen) Revisit() tea.Cmd { return s.Init() }
