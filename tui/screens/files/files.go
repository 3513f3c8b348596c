// Package files is the files pane: one directory of a workspace volume at
// a time (ARCHITECTURE §11.1), its entries with size, mode and age, a
// detail pane, directories entered with enter and left with h (never above
// the mount root), symlinks shown with their target and never followed.
//
// The volume sends no events, so the listing is read when the pane opens
// or changes directory, on r, and after every cairn write there (a load,
// an unpack, a shell's return: screen.RefreshMsg). A directory is listed
// in pages of PageSize as the cursor nears the end of what is loaded, up
// to MaxEntries; a line under the list says when more remain. The root
// runs each page's request (ListMsg) and hands the answer back (PageMsg);
// this screen only shows what it is given.
package files

import (
	"path"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// The listing's bounds: entries per request (the API's most), and per
// directory — past it the pane says the rest are not listed here.
const (
	PageSize   = cairn.MaxFileListLimit
	MaxEntries = 10 * PageSize
)

// ListMsg asks the root for one page of a directory; Screen and Req name
// the listing the answer belongs to.
type ListMsg struct {
	Screen, Req       int
	WorkspaceID, Path string
	After             string
}

// PageMsg is the root's answer to a ListMsg. An answer whose Screen or Req
// is not the pane's current listing is stale and dropped.
type PageMsg struct {
	Screen, Req int
	After       string
	Listing     *cairn.FileListing
	Err         error
}

// Screen is the files pane of one workspace.
type Screen struct {
	c      *deps.Deps
	id     int
	wsID   string
	wsName string // sanitised
	dir    string // the directory listed: a clean volume path
	list   *pane.List[*row]

	req     int    // the current listing's
	loading bool   // a page of it is on its way
	listed  bool   // its first page arrived
	next    string // the NextAfter of its last page: "" once complete
	loaded  int
	want    int   // entries to load before waiting for the cursor
	err     error // the last page's failure
	keep    string
	deleted bool // the workspace was deleted remotely

	sortBy  int
	reverse bool
}

// New opens the pane of workspace wsID at the mount root; id tells its
// answers apart from another pane's. Init asks for the first page.
func New(c *deps.Deps, wsID string, id int) *Screen {
	th := c.Theme
	tbl := table.New(rowID, columns(c), table.Styles{
		Header: th.ColumnHeader, Selected: th.Selected, Changed: th.Changed,
		Cursor: th.Glyphs.Cursor, ChangedGlyph: th.Glyphs.Changed, Ellipsis: th.Glyphs.Ellipsis,
	})
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	tbl.SetSort(order(0), false)
	s := &Screen{c: c, id: id, wsID: wsID, wsName: wsID, dir: cairn.MountPath, list: pane.New(c, tbl), want: PageSize}
	if w, ok := c.Data.Store().Workspace(wsID); ok {
		s.wsName = termkit.Sanitize(w.Name)
	}
	return s
}

// NewAt opens the pane at dir, a clean volume path checked by the caller
// (cairn.ValidateListPath).
func NewAt(c *deps.Deps, wsID string, id int, dir string) *Screen {
	s := New(c, wsID, id)
	s.dir = dir
	return s
}

// Init asks for the first page of the directory it opens at.
func (s *Screen) Init() tea.Cmd { return s.request("") }

// ID is the pane's, as its requests carry it.
func (s *Screen) ID() int { return s.id }

// WorkspaceID is the workspace whose volume the pane shows.
func (s *Screen) WorkspaceID() string { return s.wsID }

// Dir is the directory listed.
func (s *Screen) Dir() string { return s.dir }

// Selected is the entry under the cursor.
func (s *Screen) Selected() (cairn.FileEntry, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return cairn.FileEntry{}, false
	}
	return r.e, true
}

// Listed returns the entry of the directory named name, when it is
// listed.
func (s *Screen) Listed(name string) (cairn.FileEntry, bool) {
	r, ok := s.list.Table.Get(name)
	if !ok {
		return cairn.FileEntry{}, false
	}
	return r.e, true
}

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

func (s *Screen) request(after string) tea.Cmd {
	s.loading = true
	return send(ListMsg{Screen: s.id, Req: s.req, WorkspaceID: s.wsID, Path: s.dir, After: after})
}

// Update handles keys, pages and refreshes.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) {
	cmd := s.update(msg)
	s.list.SetFooter(s.footer())
	return s, cmd
}

func (s *Screen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s.key(msg)
	case PageMsg:
		if msg.Screen == s.id && msg.Req == s.req {
			return s.page(msg)
		}
	case screen.RefreshMsg:
		if (msg.WorkspaceID == "" || msg.WorkspaceID == s.wsID) && !s.deleted {
			return s.Refresh()
		}
	case screen.DataMsg:
		s.data(msg.Changes)
	case screen.ClickMsg:
		banner := 0
		if s.banner() != "" {
			banner = 1
		}
		s.list.Click(msg.X, msg.Y, banner)
	case screen.BackMsg:
		if !s.list.ClearFilter() {
			return send(screen.NavMsg{Kind: screen.NavPop})
		}
	}
	return nil
}

func (s *Screen) data(ch store.Changes) {
	for _, ref := range ch.Removed {
		if ref.Kind == store.KindWorkspace && ref.ID == s.wsID {
			s.deleted = true
		}
	}
	if w, ok := s.c.Data.Store().Workspace(s.wsID); ok {
		s.wsName = termkit.Sanitize(w.Name)
	}
}

// page takes one page of the current listing: the first replaces what
// was shown (a refresh keeps the old rows until then), the rest add to
// it; the cursor goes back to the entry it is to keep once that is listed.
func (s *Screen) page(msg PageMsg) tea.Cmd {
	s.loading = false
	if msg.Err != nil {
		s.err = msg.Err
		return nil
	}
	s.err = nil
	rows := make([]*row, len(msg.Listing.Entries))
	for i, e := range msg.Listing.Entries {
		rows[i] = newRow(e)
	}
	if msg.After == "" {
		s.list.Table.SetRows(rows)
		s.listed, s.loaded = true, len(rows)
	} else {
		s.list.Table.Upsert(rows...)
		s.loaded += len(rows)
	}
	s.next = msg.Listing.NextAfter
	if _, ok := s.list.Table.Get(s.keep); ok {
		s.list.Table.SetCursor(s.keep)
		s.keep = ""
	}
	return s.more()
}

// more asks for the next page while the listing wants more: the entries
// the cursor came near, or the entry to keep (up to MaxEntries).
func (s *Screen) more() tea.Cmd {
	limit := min(s.want, MaxEntries)
	if s.keep != "" {
		limit = MaxEntries
	}
	if s.next == "" || s.loading || s.loaded >= limit {
		if s.next == "" || s.loaded >= MaxEntries {
			s.keep = ""
		}
		return nil
	}
	return s.request(s.next)
}

// nearEnd is a cursor within a page of the last listed row: the next page
// is wanted.
func (s *Screen) nearEnd() tea.Cmd {
	if s.next == "" || s.list.Table.CursorIndex() < s.list.Table.Len()-s.list.Table.Page() {
		return nil
	}
	s.want = max(s.want, s.loaded+PageSize)
	return s.more()
}

// Refresh lists the directory again, keeping the cursor's entry and as
// many entries as were listed.
func (s *Screen) Refresh() tea.Cmd {
	s.req++
	s.keep = s.list.Table.CursorID()
	s.want = max(PageSize, s.loaded)
	s.next = ""
	return s.request("")
}

// cd lists another directory, the cursor to go to keep once listed.
func (s *Screen) cd(dir, keep string) tea.Cmd {
	s.dir, s.keep = dir, keep
	s.req++
	s.listed, s.loaded, s.next, s.err, s.want = false, 0, "", nil, PageSize
	s.list.ClearFilter()
	s.list.Table.SetRows(nil)
	return s.request("")
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeFiles)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, moved := s.list.Nav(id); handled {
		if moved {
			s.keep = "" // the operator chose another entry meanwhile
		}
		return s.nearEnd()
	}
	r, _ := s.list.Table.Cursor()
	switch id {
	case keys.Open:
		if r.isDir() {
			return s.cd(s.pathOf(r), "")
		}
		return s.act(keys.FilesPreview, r)
	case keys.FilesPreview, keys.FilesSave:
		return s.act(id, r)
	case keys.FilesLoad, keys.FilesUnpack:
		return send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, Path: s.dir, Dir: true})
	case keys.BackNav, keys.FilesParent:
		return s.cd(path.Dir(s.dir), path.Base(s.dir))
	case keys.SortNext:
		s.sortBy = (s.sortBy + 1) % sortCount
		s.list.Table.SetSortAs(sortName(s.sortBy), order(s.sortBy), s.reverse)
	case keys.SortReverse:
		s.reverse = !s.reverse
		s.list.Table.SetSortAs(sortName(s.sortBy), order(s.sortBy), s.reverse)
	case keys.CopyName:
		return send(screen.CopyMsg{Label: "name", Value: r.e.Name})
	case keys.CopyID:
		return send(screen.CopyMsg{Label: "path", Value: s.pathOf(r)})
	}
	return nil
}

// act asks the root to run an action on the entry r.
func (s *Screen) act(id keys.ID, r *row) tea.Cmd {
	return send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, Path: s.pathOf(r), Dir: r.isDir()})
}

func (s *Screen) pathOf(r *row) string { return path.Join(s.dir, r.e.Name) }

// AtRoot reports the mount root listed: h goes no higher.
func (s *Screen) AtRoot() bool { return s.dir == cairn.MountPath }

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is the workspace's artifacts: the load and unpack pickers offer
// them, so resync and polling keep them current.
func (s *Screen) Scopes() []store.Scope {
	if s.deleted {
		return nil
	}
	return []store.Scope{store.Artifacts(s.wsID)}
}

// DetailFocused reports whether the detail pane has the focus.
func (s *Screen) DetailFocused() bool { return s.list.DetailFocused() }
