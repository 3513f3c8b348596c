package pane

import (
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/keys"
)

// BulkActions are the actions that act on every marked row when there are
// marks, and on the row under the cursor otherwise.
var BulkActions = []keys.ID{keys.WsDelete, keys.ArtDelete, keys.ArtDownload, keys.WsTeardown}

// IsBulk reports an action of BulkActions.
func IsBulk(id keys.ID) bool {
	for _, b := range BulkActions {
		if b == id {
			return true
		}
	}
	return false
}

// mark handles the mark keys: space marks the row under the cursor and
// steps down, so a run of rows marks with repeated presses.
func (l *List[T]) mark(id keys.ID) (handled, moved bool) {
	switch id {
	case keys.Mark:
		before := l.Table.CursorID()
		l.Table.ToggleMark(before)
		l.Table.MoveBy(1)
		return true, l.Table.CursorID() != before
	case keys.MarkAll:
		l.Table.MarkVisible()
		return true, false
	}
	return false, false
}

// ClearMarks unmarks every row; false when none was marked.
func (l *List[T]) ClearMarks() bool {
	had := l.Table.Marks() > 0
	l.Table.ClearMarks()
	return had
}

// MarkedIDs is the marked rows' IDs in table order.
func (l *List[T]) MarkedIDs() []string {
	rows := l.Table.Marked()
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.RowID()
	}
	return out
}

// MarkCrumb is the breadcrumb suffix of the marks: "[3 marked]", or "".
func (l *List[T]) MarkCrumb() string {
	if n := l.Table.Marks(); n > 0 {
		return "[" + termkit.Count(int64(n)) + " marked]"
	}
	return ""
}

// BulkKeys makes ctx say what the bulk actions do with the marks: they act
// on every marked row whatever the cursor's row allows (the server answers
// for each), and their hint names the count.
func (l *List[T]) BulkKeys(ctx keys.Context) {
	n := l.Table.Marks()
	if n == 0 {
		return
	}
	count := " " + termkit.Count(int64(n))
	for i := range ctx.Bindings {
		b := &ctx.Bindings[i]
		if IsBulk(b.ID) && !b.Hidden {
			b.Enabled, b.Reason = true, ""
			b.Short += count
		}
	}
}
