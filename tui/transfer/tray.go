package transfer

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// tray is the focus the tray takes with tab: a cursor over its lines, so a
// transfer can be cancelled without leaving the screen.
type tray struct {
	focused bool
	cursor  int
}

func (t *tray) clamp(n int) {
	t.cursor = max(0, min(t.cursor, n-1))
	if n == 0 {
		t.focused = false
	}
}

// Tray is the transfers the tray shows: unfinished, or finished less than
// 5 s ago.
func (q *Queue) Tray() []*Transfer {
	var out []*Transfer
	for _, t := range q.list {
		if !t.Phase.Finished() || t.Lingering {
			out = append(out, t)
		}
	}
	return out
}

// TrayHeight is 0–3 rows for a window of height rows: none without
// transfers, one summary line below 24 rows, else a line per transfer up
// to 3.
func (q *Queue) TrayHeight(height int) int {
	n := len(q.Tray())
	switch {
	case n == 0:
		return 0
	case height < 24:
		return 1
	}
	return min(n, 3)
}

// TrayFocused reports whether the tray has the keys.
func (q *Queue) TrayFocused() bool { return q.tray.focused }

// FocusTray gives the tray the keys; false when it shows nothing.
func (q *Queue) FocusTray() bool {
	if len(q.Tray()) == 0 {
		return false
	}
	q.tray.focused = true
	q.tray.clamp(len(q.Tray()))
	return true
}

// BlurTray gives the keys back to the screen.
func (q *Queue) BlurTray() { q.tray.focused = false }

// CancelMsg asks the root to cancel a transfer, confirming past 50 %.
type CancelMsg struct{ ID int }

// TrayKey handles a key while the tray is focused: up and down move, x
// asks to cancel the transfer under the cursor, esc and tab leave; ok is
// false for a key the tray does not take (it then goes on to the globals).
func (q *Queue) TrayKey(id keys.ID) (cmd tea.Cmd, ok bool) {
	ts := q.Tray()
	switch id {
	case keys.Down:
		q.tray.cursor = min(q.tray.cursor+1, len(ts)-1)
	case keys.Up:
		q.tray.cursor = max(q.tray.cursor-1, 0)
	case keys.TrCancel:
		if len(ts) > 0 {
			tid := ts[q.tray.cursor].ID
			return func() tea.Msg { return CancelMsg{ID: tid} }, true
		}
	case keys.Back, keys.FocusNext, keys.FocusPrev:
		q.tray.focused = false
	default:
		return nil, false
	}
	return nil, true
}

// TrayView renders the tray for a window of width × height: beyond 3
// transfers the third line says how many more the transfers screen holds.
// The focused tray marks its cursor line with the cursor glyph.
func (q *Queue) TrayView(width, height int, frame int) []string {
	ts := q.Tray()
	th, now := q.theme, q.host.Now()
	switch h := q.TrayHeight(height); {
	case h == 0:
		return nil
	case height < 24:
		return []string{Summary(th, ts, width)}
	}
	shown := ts
	var more string
	if len(ts) > 3 {
		shown = ts[:2]
		more = table.Pad(th.Dim.Render(fmt.Sprintf("+%d more %s %s", len(ts)-2, th.Glyphs.Dot, th.Key.Render("t"))),
			width, false, th.Glyphs.Ellipsis)
	}
	out := make([]string, 0, 3)
	for i, t := range shown {
		if q.tray.focused {
			mark := "  "
			if i == q.tray.cursor {
				mark = th.Glyphs.Cursor + " "
			}
			out = append(out, mark+Line(th, t, now, frame, width-2))
			continue
		}
		out = append(out, Line(th, t, now, frame, width))
	}
	if more != "" {
		out = append(out, more)
	}
	return out
}
