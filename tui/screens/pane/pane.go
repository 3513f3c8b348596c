// Package pane is what the list screens share: an ID-keyed table with a
// filter, a detail pane beside it (width ≥ 100) or instead of it, focus and
// zoom, the navigation keys and the cursor-rest timer.
package pane

import (
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/table"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Row is a table row with its precomputed, lower-cased filter text.
type Row interface {
	RowID() string
	FilterKey() string
}

// SideBySide is the width from which list and detail share the body.
const SideBySide = 100

// List is a filtered, sorted table with a detail pane.
type List[T Row] struct {
	C     *deps.Deps
	Table *table.Model[T]
	// Extra is a screen's own filter (missing-only), applied with the query.
	Extra func(T) bool

	input     textinput.Model // focused from the start: shown only while filtering
	filtering bool
	query     string
	footer    string // a line under the list (the files pane's "more")

	detailFocus, zoom bool
	width, height     int
	restSeq           int
}

// New returns a list over tbl.
func New[T Row](c *deps.Deps, tbl *table.Model[T]) *List[T] {
	l := &List[T]{C: c, Table: tbl, input: form.NewTextInput(c.Theme, "", 128)}
	l.input.Focus()
	return l
}

// SetFooter puts a line under the list and the detail pane ("" for
// none); the table gives it a row.
func (l *List[T]) SetFooter(line string) {
	had := l.footer != ""
	l.footer = line
	if had != (line != "") {
		l.SetSize(l.width, l.height)
	}
}

// Capturing reports whether the filter input has the keys.
func (l *List[T]) Capturing() bool { return l.filtering }

// ApplyFilter re-applies the query and the extra filter.
func (l *List[T]) ApplyFilter() {
	q, extra := l.query, l.Extra
	if q == "" && extra == nil {
		l.Table.SetFilter(nil)
		return
	}
	l.Table.SetFilter(func(r T) bool {
		return (q == "" || strings.Contains(r.FilterKey(), q)) && (extra == nil || extra(r))
	})
}

// FilterCrumb is the breadcrumb suffix of an applied or typed filter:
// "/rep 12 of 1 204".
func (l *List[T]) FilterCrumb() string {
	if l.query == "" && !l.filtering {
		return ""
	}
	return "/" + l.input.Value() + " " + termkit.Count(int64(l.Table.Len())) + " of " + termkit.Count(int64(l.Table.Total()))
}

// FilterKey edits the filter while it captures keys: enter keeps, esc
// clears; every edit filters at once.
func (l *List[T]) FilterKey(k tea.KeyMsg) {
	switch k.String() {
	case "enter":
		l.filtering = false
		return
	case "esc":
		l.ClearFilter()
		return
	}
	before := l.input.Value()
	l.input, _ = l.input.Update(k) // a static cursor: no blink to schedule
	if l.input.Value() != before {
		l.query = strings.ToLower(l.input.Value())
		l.ApplyFilter()
	}
}

// ClearFilter drops the query; false when there was none.
func (l *List[T]) ClearFilter() bool {
	had := l.query != "" || l.filtering
	l.filtering = false
	l.query = ""
	l.input.Reset()
	l.ApplyFilter()
	return had
}

// Nav handles a navigation action; moved reports a cursor change.
func (l *List[T]) Nav(id keys.ID) (handled, moved bool) {
	if handled, moved := l.mark(id); handled {
		return true, moved
	}
	before := l.Table.CursorID()
	page := l.Table.Page()
	switch id {
	case keys.Down:
		l.Table.MoveBy(1)
	case keys.Up:
		l.Table.MoveBy(-1)
	case keys.Top:
		l.Table.Top()
	case keys.Bottom:
		l.Table.Bottom()
	case keys.HalfDown:
		l.Table.MoveBy(page / 2)
	case keys.HalfUp:
		l.Table.MoveBy(-page / 2)
	case keys.PageDown:
		l.Table.MoveBy(page)
	case keys.PageUp:
		l.Table.MoveBy(-page)
	case keys.Filter:
		l.filtering = true
		l.input.CursorEnd()
	default:
		return l.layoutKey(id), false
	}
	return true, l.Table.CursorID() != before
}

func (l *List[T]) layoutKey(id keys.ID) bool {
	switch id {
	case keys.FocusNext, keys.FocusPrev:
		l.detailFocus = !l.detailFocus
	case keys.Zoom:
		l.zoom = !l.zoom
	default:
		return false
	}
	l.SetSize(l.width, l.height)
	return true
}

// Rest returns the cursor-rest timers for the row under the cursor: 200 ms
// (detail fetch) and, with prefetch, 400 ms (its artifacts).
func (l *List[T]) Rest(workspaceID string, prefetch bool) tea.Cmd {
	l.restSeq++
	seq := l.restSeq
	if workspaceID == "" {
		return nil
	}
	cmds := []tea.Cmd{l.C.After(200*time.Millisecond, func() tea.Msg {
		return screen.RestMsg{Seq: seq, WorkspaceID: workspaceID}
	})}
	if prefetch {
		cmds = append(cmds, l.C.After(400*time.Millisecond, func() tea.Msg {
			return screen.RestMsg{Seq: seq, WorkspaceID: workspaceID, Prefetch: true}
		}))
	}
	return tea.Batch(cmds...)
}

// Rested reports whether a rest message is for the current cursor.
func (l *List[T]) Rested(m screen.RestMsg) bool { return m.Seq == l.restSeq }

// DetailFocused reports whether the detail pane has the focus: the next
// tab leaves the panes for the transfers tray.
func (l *List[T]) DetailFocused() bool { return l.detailFocus }

// Click is a mouse click at (x, y) of the body, banner the number of
// banner lines a screen draws above the list: a row of the list takes the
// cursor (and the focus). moved reports a cursor change.
func (l *List[T]) Click(x, y, banner int) (moved bool) {
	lw, _ := l.widths()
	if (!l.Split() && l.detailFocus) || x >= lw {
		return false
	}
	before := l.Table.CursorID()
	if !l.Table.Click(y - banner - l.topLines()) {
		return false
	}
	l.detailFocus = false
	return l.Table.CursorID() != before
}

// Key routes a key of a list screen: to the filter input while it
// captures, else as Dispatch does.
func (l *List[T]) Key(k tea.KeyMsg, ctx func() keys.Context, run func(keys.ID) tea.Cmd, scopes ...keys.Scope) tea.Cmd {
	if l.filtering {
		l.FilterKey(k)
		return nil
	}
	return Dispatch(l.C.Keys, k, ctx, run, scopes...)
}

// Dispatch routes a key of a screen to the first of scopes that binds it.
// A disabled action toasts its reason (a hidden one does nothing); run
// gets an enabled one. ctx is the screen's Keys, read only when a key is
// bound.
func Dispatch(km *keys.Map, k tea.KeyMsg, ctx func() keys.Context, run func(keys.ID) tea.Cmd, scopes ...keys.Scope) tea.Cmd {
	for _, sc := range scopes {
		id, ok := km.Lookup(sc, k.String())
		if !ok {
			continue
		}
		if st, found := ctx().Find(id); found && !st.Enabled {
			if st.Hidden {
				return nil
			}
			return screen.Send(screen.ToastMsg{Level: toast.LevelInfo, Text: st.Reason})
		}
		return run(id)
	}
	return nil
}
