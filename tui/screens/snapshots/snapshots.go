// Package snapshots is one workspace's snapshots screen: every snapshot of
// its volume oldest first, with its age, entries, size, what it uploaded
// and whether it was taken live; n takes one, R restores the selected one
// into the workspace, F forks the workspace and D deletes the selected one
// — each asked of the root, which asks the operator first.
//
// The screen does no I/O. It asks the root to list (ListMsg) and takes the
// answer (ListedMsg); an answer for another screen or an older request is
// dropped. It lists again on ChangedMsg for its workspace (a snapshot
// taken or deleted, whoever did it: the root turns the live events into
// it, and sends it after its own snapshot actions) or for "" (a resync),
// on screen.RefreshMsg for "" (r), and when its workspace leaves the
// store.
package snapshots

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
)

// ListMsg asks the root to run ListSnapshots(WorkspaceID) and answer with
// a ListedMsg carrying the same Screen and Req.
type ListMsg struct {
	Screen, Req int
	WorkspaceID string
}

// ListedMsg is the root's answer to a ListMsg.
type ListedMsg struct {
	Screen, Req int
	Snapshots   []*cairn.Snapshot
	Err         error
}

// ChangedMsg tells the snapshots screens that a workspace's snapshots
// changed; "" is any workspace's (changes may have been missed).
type ChangedMsg struct{ WorkspaceID string }

// ActionMsg asks the root to run a snapshot action of workspace
// WorkspaceID: take and fork (Snapshot nil), or restore and delete of
// Snapshot.
type ActionMsg struct {
	ID          keys.ID
	WorkspaceID string
	Snapshot    *cairn.Snapshot
}

var _ screen.Screen = (*Screen)(nil)

// Screen lists one workspace's snapshots.
type Screen struct {
	c      *deps.Deps
	id     int
	wsID   string
	wsName string // sanitised
	list   *pane.List[*row]

	req     int
	loading bool
	again   bool // a change came while a list ran: list once more
	listed  bool
	err     error
	snaps   []*cairn.Snapshot
}

// New returns the snapshots of workspace wsID; id tells its answers apart
// from another screen's. Init lists.
func New(c *deps.Deps, wsID string, id int) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c))
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	tbl.SetSort(oldestFirst, false)
	return &Screen{c: c, id: id, wsID: wsID, wsName: workspaceName(c, wsID), list: pane.New(c, tbl)}
}

// Init lists.
func (s *Screen) Init() tea.Cmd { return s.request() }

// ID is the screen's, as its requests carry it.
func (s *Screen) ID() int { return s.id }

// WorkspaceID is the workspace shown.
func (s *Screen) WorkspaceID() string { return s.wsID }

// Selected is the snapshot under the cursor.
func (s *Screen) Selected() (*cairn.Snapshot, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil, false
	}
	return r.snap, true
}

// request asks for a list unless one runs; then it asks once more when
// that one is answered, since what changed meanwhile may not be in it.
func (s *Screen) request() tea.Cmd {
	if s.loading {
		s.again = true
		return nil
	}
	s.req++
	s.loading, s.again = true, false
	return screen.Send(ListMsg{Screen: s.id, Req: s.req, WorkspaceID: s.wsID})
}

// Update handles keys, answers and the changes that list again.
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
	case ChangedMsg:
		if msg.WorkspaceID == "" || msg.WorkspaceID == s.wsID {
			return s.request()
		}
	case screen.RefreshMsg:
		if msg.WorkspaceID == "" { // r; a volume written changes no snapshot
			return s.request()
		}
	case screen.DataMsg:
		return s.data(msg.Changes)
	case screen.BackMsg:
		return s.list.Back()
	}
	return nil
}

// data re-reads the workspace's name; a workspace gone takes its
// snapshots with it, which a new list shows.
func (s *Screen) data(ch store.Changes) tea.Cmd {
	s.wsName = workspaceName(s.c, s.wsID)
	for _, ref := range ch.Removed {
		if ref.Kind == store.KindWorkspace && ref.ID == s.wsID {
			return s.request()
		}
	}
	return nil
}

func (s *Screen) listedMsg(msg ListedMsg) tea.Cmd {
	s.loading = false
	if msg.Err != nil {
		s.err = msg.Err
	} else {
		s.err, s.listed, s.snaps = nil, true, msg.Snapshots
		s.list.Table.SetRows(pane.Rows(s.snaps, newRow))
	}
	if s.again {
		return s.request()
	}
	return nil
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeSnapshots)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, _ := s.list.Nav(id); handled {
		return nil
	}
	snap, _ := s.Selected()
	switch id {
	case keys.SnapTake, keys.SnapFork:
		return screen.Send(ActionMsg{ID: id, WorkspaceID: s.wsID})
	case keys.SnapRestore, keys.SnapDelete:
		return screen.Send(ActionMsg{ID: id, WorkspaceID: s.wsID, Snapshot: snap})
	case keys.BackNav:
		return screen.Send(screen.NavMsg{Kind: screen.NavPop})
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "name", Value: snap.Name})
	case keys.CopyID:
		return screen.Send(screen.CopyMsg{Label: "snapshot ID", Value: snap.ID})
	}
	return nil
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is the workspaces, for the workspace's name and volume state:
// resync and polling keep them current.
func (s *Screen) Scopes() []store.Scope { return []store.Scope{store.Workspaces()} }

// DetailFocused reports whether the detail pane has the focus.
func (s *Screen) DetailFocused() bool { return s.list.DetailFocused() }

// workspaceName is the workspace's sanitised name, or the start of its ID
// when the store does not know it.
func workspaceName(c *deps.Deps, id string) string {
	if w, ok := c.Data.Store().Workspace(id); ok {
		return termkit.Sanitize(w.Name)
	}
	if len(id) > 8 {
		id = id[:8]
	}
	return termkit.Sanitize(id)
}
