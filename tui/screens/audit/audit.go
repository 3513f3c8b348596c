// Package audit is the audit trail screen (GET /v1/audit, admin scope):
// every recorded mutation newest first, or one workspace's, with its time,
// type, actor, workspace, request ID and a summary of the rest of its
// metadata; T cycles the type shown (every type, then each in turn).
//
// The screen does no I/O. It asks the root for one page at a time
// (ListMsg) and takes the answer (PageMsg); an answer for another screen
// or an older listing is dropped. Pages of PageSize are asked for as the
// cursor nears the end of what is loaded, up to MaxEvents; a line under
// the list says when more remain. It lists again from the top, keeping the
// cursor's event, on screen.RefreshMsg and when events of its workspace
// (any, when it shows every workspace) change the store.
package audit

import (
	"errors"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// The listing's bounds: events per request, and held at most.
const (
	PageSize  = 200
	MaxEvents = 50 * PageSize
)

// Types is every audit type, in the order T cycles through them after
// "every type".
var Types = cairn.AuditTypes()

// ListMsg asks the root for one page of events, newest first; Filter is
// the request to make. Screen and Req name the listing the answer (PageMsg)
// belongs to.
type ListMsg struct {
	Screen, Req int
	WorkspaceID string
	Types       []cairn.AuditType
	Offset      int
}

// Filter is the FindAuditEvents filter of the request.
func (m ListMsg) Filter() cairn.AuditFilter {
	return cairn.AuditFilter{WorkspaceID: m.WorkspaceID, Types: m.Types, Newest: true,
		Page: cairn.Page{Offset: m.Offset, Limit: PageSize}}
}

// PageMsg is the root's answer to a ListMsg, with its Screen, Req and
// Offset.
type PageMsg struct {
	Screen, Req int
	Offset      int
	Events      []*cairn.AuditEvent
	Err         error
}

var _ screen.Screen = (*Screen)(nil)

// Screen is the audit trail.
type Screen struct {
	c      *deps.Deps
	id     int
	wsID   string // "" for every workspace
	wsName string
	list   *pane.List[*row]
	typ    int // 0: every type; i: Types[i-1]

	req     int
	loading bool
	again   bool // a refresh came while a page ran: list again after it
	listed  bool
	more    bool // the last page was full
	loaded  int
	want    int
	err     error
	keep    string
}

// New returns the audit trail of workspace wsID ("" for every workspace);
// id tells its answers apart from another screen's. Init asks for the
// first page.
func New(c *deps.Deps, wsID string, id int) *Screen {
	th := c.Theme
	tbl := table.New(rowID, columns(c, wsID == ""), table.Styles{
		Header: th.ColumnHeader, Selected: th.Selected, Changed: th.Changed,
		Cursor: th.Glyphs.Cursor, ChangedGlyph: th.Glyphs.Changed, Ellipsis: th.Glyphs.Ellipsis,
	})
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	tbl.SetSort(newestFirst, false)
	return &Screen{c: c, id: id, wsID: wsID, wsName: workspaceName(c, wsID), list: pane.New(c, tbl), want: PageSize}
}

// Init asks for the first page.
func (s *Screen) Init() tea.Cmd { return s.restart() }

// ID is the screen's, as its requests carry it.
func (s *Screen) ID() int { return s.id }

// WorkspaceID is the workspace shown, "" for every one.
func (s *Screen) WorkspaceID() string { return s.wsID }

// Type is the type shown, "" for every type.
func (s *Screen) Type() cairn.AuditType {
	if s.typ == 0 {
		return ""
	}
	return Types[s.typ-1]
}

// Selected is the event under the cursor.
func (s *Screen) Selected() (*cairn.AuditEvent, bool) {
	r, ok := s.list.Table.Cursor()
	if !ok {
		return nil, false
	}
	return r.ev, true
}

func send(msg tea.Msg) tea.Cmd { return func() tea.Msg { return msg } }

func (s *Screen) request(offset int) tea.Cmd {
	s.loading = true
	var types []cairn.AuditType
	if t := s.Type(); t != "" {
		types = []cairn.AuditType{t}
	}
	return send(ListMsg{Screen: s.id, Req: s.req, WorkspaceID: s.wsID, Types: types, Offset: offset})
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
		if msg.WorkspaceID == "" || s.wsID == "" || msg.WorkspaceID == s.wsID {
			return s.Refresh()
		}
	case screen.DataMsg:
		s.wsName = workspaceName(s.c, s.wsID)
		if s.touched(msg.Changes) {
			return s.Refresh()
		}
	case screen.BackMsg:
		if !s.list.ClearFilter() {
			return send(screen.NavMsg{Kind: screen.NavPop})
		}
	}
	return nil
}

// touched reports a change the trail may have recorded: any, when every
// workspace shows; else one of its workspace or its artifacts.
func (s *Screen) touched(ch store.Changes) bool {
	for _, refs := range [][]store.Ref{ch.Added, ch.Updated, ch.Removed} {
		for _, ref := range refs {
			if s.wsID == "" || ref.ID == s.wsID || ref.WorkspaceID == s.wsID {
				return true
			}
		}
	}
	return false
}

// page takes one page: the first of a listing replaces what was shown
// (a refresh keeps the old rows until then), the rest add to it; the
// cursor goes back to the event it is to keep once that is listed.
func (s *Screen) page(msg PageMsg) tea.Cmd {
	s.loading = false
	if s.again {
		s.again = false
		return s.Refresh()
	}
	if msg.Err != nil {
		s.err = msg.Err
		return nil
	}
	s.err = nil
	rows := make([]*row, len(msg.Events))
	for i, ev := range msg.Events {
		rows[i] = newRow(ev)
	}
	if msg.Offset == 0 {
		s.list.Table.SetRows(rows)
		s.listed, s.loaded = true, len(rows)
	} else {
		s.list.Table.Upsert(rows...)
		s.loaded += len(rows)
	}
	s.more = len(rows) == PageSize
	if _, ok := s.list.Table.Get(s.keep); ok {
		s.list.Table.SetCursor(s.keep)
		s.keep = ""
	}
	return s.next()
}

// next asks for the next page while the listing wants more: the events
// the cursor came near, or the event to keep (up to MaxEvents).
func (s *Screen) next() tea.Cmd {
	limit := min(s.want, MaxEvents)
	if s.keep != "" {
		limit = MaxEvents
	}
	if !s.more || s.loading || s.loaded >= limit {
		if !s.more || s.loaded >= MaxEvents {
			s.keep = ""
		}
		return nil
	}
	return s.request(s.loaded)
}

// nearEnd is a cursor within a page of the last loaded row: the next page
// is wanted.
func (s *Screen) nearEnd() tea.Cmd {
	if !s.more || s.list.Table.CursorIndex() < s.list.Table.Len()-s.list.Table.Page() {
		return nil
	}
	s.want = max(s.want, s.loaded+PageSize)
	return s.next()
}

// Refresh lists again from the top, keeping the cursor's event and as
// many events as were loaded. A refresh while a page runs waits for it.
func (s *Screen) Refresh() tea.Cmd {
	if s.loading {
		s.again = true
		return nil
	}
	s.req++
	s.keep = s.list.Table.CursorID()
	s.want = max(PageSize, s.loaded)
	s.more = false
	return s.request(0)
}

// restart lists from the top with nothing kept: a new type.
func (s *Screen) restart() tea.Cmd {
	s.req++
	s.listed, s.loaded, s.more, s.err, s.keep, s.want, s.again = false, 0, false, nil, "", PageSize, false
	s.list.Table.SetRows(nil)
	return s.request(0)
}

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeAudit)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if handled, moved := s.list.Nav(id); handled {
		if moved {
			s.keep = "" // the operator chose another event meanwhile
		}
		return s.nearEnd()
	}
	r, _ := s.list.Table.Cursor()
	switch id {
	case keys.AuditTypes:
		s.typ = (s.typ + 1) % (len(Types) + 1)
		return s.restart()
	case keys.BackNav:
		return send(screen.NavMsg{Kind: screen.NavPop})
	case keys.CopyName:
		return send(screen.CopyMsg{Label: "request ID", Value: r.requestID})
	case keys.CopyID:
		return send(screen.CopyMsg{Label: "event ID", Value: r.ev.ID})
	}
	return nil
}

// forbidden reports the token lacking the admin scope.
func forbidden(err error) bool {
	var e *cairn.Error
	return errors.As(err, &e) && (e.Reason == cairn.ReasonForbidden || e.Status == 403)
}

// SetSize lays the screen out.
func (s *Screen) SetSize(width, height int) { s.list.SetSize(width, height) }

// Capturing reports an active filter input.
func (s *Screen) Capturing() bool { return s.list.Capturing() }

// Scopes is the workspaces, for their names.
func (s *Screen) Scopes() []store.Scope { return []store.Scope{store.Workspaces()} }

// DetailFocused reports whether the detail pane has the focus.
func (s *Screen) DetailFocused() bool { return s.list.DetailFocused() }

// Revisit is the screen on top again: it lists from the top, keeping the
// cursor's event, since rows may have been added while it was covered.
func (s *Screen) Revisit() tea.Cmd { return s.Refresh() }
