// Package files is the files pane: one directory of a workspace volume at
// a time, its entries with size, mode and age, a detail pane, directories
// entered with enter and left with h (never above the mount root),
// symlinks shown with their target and never followed.
//
// The listing is read when the pane opens or changes directory, on r,
// after every cairn write there (a load, an unpack, a shell's return:
// screen.RefreshMsg) and, while the root watches the directory (SetLive),
// when the server says its entries changed. A directory is listed
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

// Live is the state of the watch on the listed directory, shown after
// the title: off (no watch, or not yet: r lists again), waiting (the
// watch reconnects), on (changes list the directory again by themselves).
type Live uint8

const (
	LiveOff Live = iota
	LiveWaiting
	LiveOn
)

// Screen is the files pane of one workspace.
type Screen struct {
	c       *deps.Deps
	id      int
	wsID    string
	wsName  string // sanitised
	dir     string // the directory listed: a clean volume path
	list    *pane.List[*row]
	pages   *pane.Pages[*row]
	after   string // the NextAfter of the listing's last page: where the next one starts
	deleted bool   // the workspace was deleted remotely
	live    Live   // the watch of dir, as the root reports it

	sortBy  int
	reverse bool
}

// New opens the pane of workspace wsID at the mount root; id tells its
// answers apart from another pane's. Init asks for the first page.
func New(c *deps.Deps, wsID string, id int) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c))
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	tbl.SetSort(order(0), false)
	s := &Screen{c: c, id: id, wsID: wsID, wsName: wsID, dir: cairn.MountPath, list: pane.New(c, tbl)}
	s.pages = pane.NewPages(s.list, pane.Paging{Size: PageSize, Most: MaxEntries, Noun: "entries",
		Bound: "only the first " + termkit.Count(MaxEntries) + " entries are listed here — a shell lists the rest"}, s.ask)
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
func (s *Screen) Init() tea.Cmd { return s.pages.Start() }

// ID is the pane's, as its requests carry it.
func (s *Screen) ID() int { return s.id }

// WorkspaceID is the workspace whose volume the pane shows.
func (s *Screen) WorkspaceID() string { return s.wsID }

// Dir is the directory listed.
func (s *Screen) Dir() string { return s.dir }

// Deleted reports the workspace deleted remotely: the pane lists nothing
// more.
func (s *Screen) Deleted() bool { return s.deleted }

// Loaded is how many entries the listing holds.
func (s *Screen) Loaded() int { return s.pages.Loaded() }

// SetLive shows the state of the watch on the listed directory.
func (s *Screen) SetLive(l Live) { s.live = l }

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

// ask is the request of the directory's first page, or of the one after
// the entries listed.
func (s *Screen) ask(next bool) tea.Cmd {
	after := ""
	if next {
		after = s.after
	}
	return screen.Send(ListMsg{Screen: s.id, Req: s.pages.Req(), WorkspaceID: s.wsID, Path: s.dir, After: after})
}

// Update handles keys, pages and refreshes.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) { return s, s.update(msg) }

func (s *Screen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s.key(msg)
	case PageMsg:
		if msg.Screen == s.id && msg.Req == s.pages.Req() {
			return s.page(msg)
		}
	case screen.RefreshMsg:
		if (msg.WorkspaceID == "" || msg.WorkspaceID == s.wsID) && !s.deleted {
			return s.refreshAt(msg.At)
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
		return s.list.Back()
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

// page takes one page of the current listing.
func (s *Screen) page(msg PageMsg) tea.Cmd {
	if msg.Err != nil {
		return s.pages.Take(msg.After != "", nil, false, msg.Err)
	}
	s.after = msg.Listing.NextAfter
	return s.pages.Take(msg.After != "", pane.Rows(msg.Listing.Entries, newRow), s.after != "", nil)
}

// Refresh lists the directory again, keeping the cursor's entry and as
// many entries as were listed.
func (s *Screen) Refresh() tea.Cmd { return s.pages.Refresh() }

// refreshAt is Refresh after a write that left something at the volume
// path at: the cursor goes there when it is in this directory.
func (s *Screen) refreshAt(at string) tea.Cmd {
	if at == "" || path.Dir(at) != s.dir {
		return s.Refresh()
	}
	return s.pages.RefreshTo(path.Base(at))
}

// cd lists another directory, the cursor to go to keep once listed.
func (s *Screen) cd(dir, keep string) tea.Cmd {
	s.dir = dir
	s.list.ClearFilter()
	return s.pages.Restart(keep)
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeFiles)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if cmd, handled := s.pages.Nav(id); handled {
		return cmd
	}
	r, _ := s.list.Table.Cursor()
	switch id {
	case keys.Open:
		if r.isDir() {
			return s.cd(s.pathOf(r), "")
		}
		return s.act(keys.FilesPreview, r)
	case keys.FilesPreview, keys.FilesSave, keys.FilesEdit, keys.FilesMove, keys.FilesDelete:
		return s.act(id, r)
	case keys.FilesLoad, keys.FilesUnpack, keys.FilesMkdir, keys.FilesUpload:
		return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, Path: s.dir, Dir: true})
	case keys.BackNav, keys.FilesParent:
		return s.cd(path.Dir(s.dir), path.Base(s.dir))
	case keys.SortNext:
		s.sortBy = (s.sortBy + 1) % sortCount
		s.list.Table.SetSortAs(sortName(s.sortBy), order(s.sortBy), s.reverse)
	case keys.SortReverse:
		s.reverse = !s.reverse
		s.list.Table.SetSortAs(sortName(s.sortBy), order(s.sortBy), s.reverse)
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "name", Value: r.e.Name})
	case keys.CopyID:
		return screen.Send(screen.CopyMsg{Label: "path", Value: s.pathOf(r)})
	}
	return nil
}

// act asks the root to run an action on the entry r.
func (s *Screen) act(id keys.ID, r *row) tea.Cmd {
	return screen.Send(screen.ActionMsg{ID: id, WorkspaceID: s.wsID, Path: s.pathOf(r), Dir: r.isDir()})
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
