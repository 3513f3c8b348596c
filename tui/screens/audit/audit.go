// Package audit is the audit trail screen (GET /v1/audit, admin scope):
// every recorded mutation newest first, or one workspace's, with its time,
// type, actor, workspace, request ID and a summary of the rest of its
// metadata; T cycles the type shown (every type, then each in turn).
//
// The screen does no I/O. It asks the root for one page at a time
// (ListMsg) and takes the answer (PageMsg); an answer for another screen
// or an older listing is dropped (pane.Pages keeps the listing). Pages of PageSize are asked for as the
// cursor nears the end of what is loaded, up to MaxEvents; a line under
// the list says when more remain. It lists again from the top, keeping the
// cursor's event, on screen.RefreshMsg and when events of its workspace
// (any, when it shows every workspace) change the store.
package audit

import (
	"errors"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
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
	pages  *pane.Pages[*row]
	typ    int // 0: every type; i: Types[i-1]
}

// New returns the audit trail of workspace wsID ("" for every workspace);
// id tells its answers apart from another screen's. Init asks for the
// first page.
func New(c *deps.Deps, wsID string, id int) *Screen {
	tbl := pane.NewTable(c.Theme, rowID, columns(c, wsID == ""))
	tbl.Stamp = func(r *row) string { return stamp(c, r) }
	tbl.SetSort(newestFirst, false)
	s := &Screen{c: c, id: id, wsID: wsID, wsName: workspaceName(c, wsID), list: pane.New(c, tbl)}
	s.pages = pane.NewPages(s.list, pane.Paging{Size: PageSize, Most: MaxEvents, Noun: "events",
		Bound: "only the newest " + termkit.Count(MaxEvents) + " events are held here — T narrows to one type"}, s.ask)
	return s
}

// Init asks for the first page.
func (s *Screen) Init() tea.Cmd { return s.pages.Restart("") }

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

// ask is the request of the listing's first page, or of the one after
// the events loaded.
func (s *Screen) ask(next bool) tea.Cmd {
	var types []cairn.AuditType
	if t := s.Type(); t != "" {
		types = []cairn.AuditType{t}
	}
	offset := 0
	if next {
		offset = s.pages.Loaded()
	}
	return screen.Send(ListMsg{Screen: s.id, Req: s.pages.Req(), WorkspaceID: s.wsID, Types: types, Offset: offset})
}

// Update handles keys, pages and refreshes.
func (s *Screen) Update(msg tea.Msg) (screen.Screen, tea.Cmd) { return s, s.update(msg) }

func (s *Screen) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return s.key(msg)
	case PageMsg:
		if msg.Screen == s.id && msg.Req == s.pages.Req() {
			return s.pages.Take(msg.Offset > 0, pane.Rows(msg.Events, newRow), len(msg.Events) == PageSize, msg.Err)
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
		return s.list.Back()
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

// Refresh lists again from the top, keeping the cursor's event and as
// many events as were loaded. A refresh while a page runs waits for it.
func (s *Screen) Refresh() tea.Cmd { return s.pages.Refresh() }

func (s *Screen) key(k tea.KeyMsg) tea.Cmd {
	return s.list.Key(k, s.Keys, s.action, keys.ScopeNav, keys.ScopeAudit)
}

func (s *Screen) action(id keys.ID) tea.Cmd {
	if cmd, handled := s.pages.Nav(id); handled {
		return cmd
	}
	r, _ := s.list.Table.Cursor()
	switch id {
	case keys.AuditTypes:
		s.typ = (s.typ + 1) % (len(Types) + 1)
		return s.pages.Restart("")
	case keys.BackNav:
		return screen.Send(screen.NavMsg{Kind: screen.NavPop})
	case keys.CopyName:
		return screen.Send(screen.CopyMsg{Label: "request ID", Value: r.requestID})
	case keys.CopyID:
		return screen.Send(screen.CopyMsg{Label: "event ID", Value: r.ev.ID})
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
