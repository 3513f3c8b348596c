package artifacts

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

// Screen lists one workspace's artifacts.
type Screen struct {
	c           *deps.Deps
	wsID        string
	wsName      string // sanitised, for the crumbs and the empty text
	list        *pane.List[*row]
	sortBy      int
	reverse     bool
	missingOnly bool
	deleted     bool // the workspace was deleted remotely: rows stay, read-only
	// rest is the artifact content the cursor last stood on and the
	// sequence of its rest timer: the detail pane asks for the first
	// lines of a small text artifact after 300 ms there.
	rest    screen.HeadMsg
	restSeq int
}

// headRestMsg is the cursor having rested on an artifact for 300 ms.
type headRestMsg struct{ seq int }

// New returns the screen of workspace wsID, filled from the store.
func New(c *deps.Deps, wsID string) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c))
	tbl.Changed = func(r *row) bool { return c.Changed(r.art.ID) }
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	s := &Screen{c: c, wsID: wsID, list: pane.New(c, tbl)}
	s.wsName = wsID
	if w, ok := c.Data.Store().Workspace(wsID); ok {
		s.wsName = termkit.Sanitize(w.Name)
	}
	tbl.SetSort(order(0), false)
	arts, _ := c.Data.Store().Artifacts(wsID)
	tbl.SetRows(pane.Rows(arts, newRow))
	return s
}

// Select puts the cursor on an artifact, clearing a filter that hides it.
func (s *Screen) Select(id string) {
	if s.list.Table.SetCursor(id); s.list.Table.CursorID() != id {
		s.list.ClearFilter()
		s.missingOnly, s.list.Extra = false, nil
		s.list.ApplyFilter()
		s.list.Table.SetCursor(id)
	}
}

// WorkspaceID is the workspace the screen shows.
func (s *Screen) WorkspaceID() string { return s.wsID }

// Selected is the artifact under the cursor.
func (s *Screen) Selected() (*cairn.Artifact, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil, false
	}
	return r.art, true
}

// Update handles keys and data for the screen.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	cmd := s.update(msg)
	return s, tea.Batch(cmd, s.restIfMoved())
}

// Init starts the rest timer of the row the cursor opens on: a cached
// set gets no data message to start it.
func (s *Screen) Init() tea.Cmd { return s.restIfMoved() }

// restIfMoved starts the rest timer when the cursor stands on other
// content than before.
func (s *Screen) restIfMoved() tea.Cmd {
	var at screen.HeadMsg
	if a, ok := s.Selected(); ok && s.c.Inlined(a) {
		at = screen.HeadMsg{ArtifactID: a.ID, UpdatedAt: a.UpdatedAt}
	}
	if at == s.rest {
		return nil
	}
	s.rest = at
	s.restSeq++
	if at.ArtifactID == "" {
		return nil
	}
	seq := s.restSeq
	return s.c.After(300*time.Millisecond, func() tea.Msg { return headRestMsg{seq: seq} })
}

func (s *Screen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case headRestMsg:
		if msg.seq != s.restSeq || s.rest.ArtifactID == "" {
			return nil
		}
		if _, ok := s.c.Data.Head(s.rest.ArtifactID, s.rest.UpdatedAt); ok {
			return nil
		}
		return screen.Send(s.rest)
	case tea.KeyMsg:
		return s.key(msg)
	case screen.DataMsg:
		s.data(msg.Changes)
	case screen.ClearMarksMsg:
		s.list.ClearMarks()
	case screen.ClickMsg:
		banner := 0
		if s.deleted {
			banner = 1
		}
		s.list.Click(msg.X, msg.Y, banner)
	case screen.BackMsg:
		return s.list.Back()
	}
	return nil
}

func (s *Screen) data(ch store.Changes) {
	st := s.c.Data.Store()
	for _, ref := range ch.Removed {
		if ref.Kind == store.KindWorkspace && ref.ID == s.wsID {
			s.deleted = true
		}
	}
	if w, ok := st.Workspace(s.wsID); ok {
		s.wsName = termkit.Sanitize(w.Name)
	}
	if s.deleted {
		return // the rows stay under the banner
	}
	var up []*row
	var gone []string
	for _, ref := range append(ch.Added, ch.Updated...) {
		if ref.Kind == store.KindArtifact && ref.WorkspaceID == s.wsID {
			if a, ok := st.Artifact(ref.ID); ok {
				up = append(up, newRow(a))
			}
		}
	}
	for _, ref := range ch.Removed {
		if ref.Kind == store.KindArtifact && ref.WorkspaceID == s.wsID {
			gone = append(gone, ref.ID)
		}
	}
	s.list.Table.Upsert(up...)
	s.list.Table.Remove(gone...)
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeLists, keys.ScopeArtifacts)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, _ := s.list.Nav(id); handled {
		return nil
	}
	if marked := s.list.MarkedIDs(); len(marked) > 0 && pane.IsBulk(id) {
		return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, Marked: marked})
	}
	a, _ := s.Selected()
	switch id {
	case keys.Open, keys.Preview:
		return screen.Send(screen.ActionMsg{ID: keys.Preview, WorkspaceID: s.wsID, ArtifactID: a.ID})
	case keys.ArtUpload, keys.Shell, keys.VolSave, keys.WsSweep, keys.Files, keys.ShellsOf, keys.AuditOf, keys.Snapshots:
		return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID})
	case keys.ArtReplace, keys.ArtDownload, keys.VolLoad, keys.VolUpdate:
		return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, ArtifactID: a.ID})
	case keys.BackNav:
		return screen.Send(screen.NavMsg{Kind: screen.NavPop})
	case keys.SortNext:
		s.sortBy = (s.sortBy + 1) % sortCount
		s.list.Table.SetSortAs(sortName(s.sortBy), order(s.sortBy), s.reverse)
	case keys.SortReverse:
		s.reverse = !s.reverse
		s.list.Table.SetSortAs(sortName(s.sortBy), order(s.sortBy), s.reverse)
	case keys.MissingOnly:
		s.missingOnly = !s.missingOnly
		s.list.Extra = nil
		if s.missingOnly {
			s.list.Extra = func(r *row) bool { return missing(r.art) }
		}
		s.list.ApplyFilter()
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "name", Value: a.Name})
	case keys.CopyID:
		return screen.Send(screen.CopyMsg{Label: "ID", Value: a.ID})
	case keys.ArtEdit, keys.ArtDelete:
		return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, ArtifactID: a.ID})
	}
	return nil
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is this workspace's artifacts (none once it was deleted).
func (s *Screen) Scopes() []store.Scope {
	if s.deleted {
		return nil
	}
	return []store.Scope{store.Artifacts(s.wsID)}
}

// DetailFocused reports whether the detail pane has the focus.
func (s *Screen) DetailFocused() bool { return s.list.DetailFocused() }
