package workspaces

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

// Screen is the workspaces list.
type Screen struct {
	c       *deps.Deps
	list    *pane.List[*row]
	sortBy  int
	reverse bool
}

// New returns the screen, filled from the store.
func New(c *deps.Deps) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c))
	tbl.Changed = func(r *row) bool { return c.Changed(r.ws.ID) }
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	s := &Screen{c: c, list: pane.New(c, tbl)}
	tbl.SetSort(order(c, 0), false)
	s.reload()
	return s
}

func (s *Screen) reload() {
	s.list.Table.SetRows(pane.Rows(s.c.Data.Store().Workspaces(), newRow))
}

// Selected is the workspace under the cursor.
func (s *Screen) Selected() (*cairn.Workspace, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil, false
	}
	return r.ws, true
}

// Update handles keys and data for the screen.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s, s.key(msg)
	case screen.DataMsg:
		return s, s.data(msg.Changes)
	case screen.RestMsg:
		if s.list.Rested(msg) {
			return s, screen.Send(screen.FetchMsg{WorkspaceID: msg.WorkspaceID, Prefetch: msg.Prefetch})
		}
	case screen.ClearMarksMsg:
		s.list.ClearMarks()
	case screen.ClickMsg:
		if s.list.Click(msg.X, msg.Y, 0) {
			return s, s.list.Rest(s.list.Table.CursorID(), true)
		}
	case screen.BackMsg:
		return s, s.list.Back()
	}
	return s, nil
}

// data applies store changes to the table; a moved cursor rests anew.
func (s *Screen) data(ch store.Changes) tea.Cmd {
	before := s.list.Table.CursorID()
	var up []*row
	var gone []string
	st := s.c.Data.Store()
	for _, ref := range append(ch.Added, ch.Updated...) {
		if ref.Kind != store.KindWorkspace {
			continue
		}
		if w, ok := st.Workspace(ref.ID); ok {
			up = append(up, newRow(w))
		}
	}
	for _, ref := range ch.Removed {
		if ref.Kind == store.KindWorkspace {
			gone = append(gone, ref.ID)
		}
	}
	s.list.Table.Upsert(up...)
	s.list.Table.Remove(gone...)
	if id := s.list.Table.CursorID(); id != before {
		return s.list.Rest(id, true)
	}
	return nil
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	if !s.list.Capturing() {
		return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeLists, keys.ScopeWorkspaces)
	}
	before := s.list.Table.CursorID()
	s.list.FilterKey(k)
	if id := s.list.Table.CursorID(); id != before {
		return s.list.Rest(id, true)
	}
	return nil
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, moved := s.list.Nav(id); handled {
		if moved {
			return s.list.Rest(s.list.Table.CursorID(), true)
		}
		return nil
	}
	if marked := s.list.MarkedIDs(); len(marked) > 0 && pane.IsBulk(id) {
		return screen.Send(screen.ActionMsg{ID: id, Marked: marked})
	}
	w, _ := s.Selected()
	switch id {
	case keys.Open:
		return screen.Send(screen.NavMsg{Kind: screen.NavPush, WorkspaceID: w.ID})
	case keys.SortNext:
		s.sortBy = (s.sortBy + 1) % sortCount
		s.list.Table.SetSort(order(s.c, s.sortBy), s.reverse)
	case keys.SortReverse:
		s.reverse = !s.reverse
		s.list.Table.SetSort(order(s.c, s.sortBy), s.reverse)
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "name", Value: w.Name})
	case keys.CopyID:
		return screen.Send(screen.CopyMsg{Label: "ID", Value: w.ID})
	case keys.WsNew, keys.WsEdit, keys.WsProvision, keys.WsTeardown, keys.WsDelete, keys.WsTouch, keys.Shell, keys.VolSave, keys.WsSweep, keys.Files,
		keys.ShellsOf, keys.AuditOf, keys.Snapshots:
		target := ""
		if w != nil {
			target = w.ID
		}
		return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: target})
	}
	return nil
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is the workspaces list.
func (s *Screen) Scopes() []store.Scope { return []store.Scope{store.Workspaces()} }

// Crumbs is "workspaces (12)" plus the filter.
func (s *Screen) Crumbs() []string {
	crumb := "workspaces (" + termkit.Count(int64(s.list.Table.Total())) + ")"
	if st := s.c.Data.List(store.Workspaces()); st.Loading && st.Loaded > 0 {
		crumb = "workspaces (loading " + termkit.Count(int64(st.Loaded)) + "…)"
	}
	return s.list.Crumbs("", crumb)
}

// DetailFocused reports whether the detail pane has the focus.
func (s *Screen) DetailFocused() bool { return s.list.DetailFocused() }
