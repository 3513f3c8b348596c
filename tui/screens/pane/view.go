package pane

import (
	"strings"

	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// SetSize lays out list and detail for the body size.
func (l *List[T]) SetSize(width, height int) {
	l.width, l.height = width, height
	lw, dw := l.widths()
	if dw > 0 && l.Split() {
		lw-- // a space before the bar
	}
	l.Table.SetSize(lw, max(1, height-l.topLines()-l.footerLines()))
}

func (l *List[T]) footerLines() int {
	if l.footer != "" {
		return 1
	}
	return 0
}

// topLines is the filter prompt line while typing.
func (l *List[T]) topLines() int {
	if l.filtering {
		return 1
	}
	return 0
}

// Split reports whether list and detail show side by side.
func (l *List[T]) Split() bool { return l.width >= SideBySide && !l.zoom }

// DetailWidth is the detail pane's width, 0 when it is hidden.
func (l *List[T]) DetailWidth() int {
	_, dw := l.widths()
	return dw
}

// widths returns the list and detail widths: 40 % clamped to 34–60 beside
// the list at width ≥ 100, else one pane (tab flips).
func (l *List[T]) widths() (int, int) {
	if l.Split() {
		dw := max(34, min(60, l.width*40/100))
		return l.width - dw - 1, dw
	}
	if l.detailFocus {
		return l.width, l.width
	}
	return l.width, 0
}

// DetailShown reports whether the detail pane is visible.
func (l *List[T]) DetailShown() bool { return l.Split() || l.detailFocus }

// View draws the body: banner and filter prompt on top, then the list (or
// empty text) and the detail pane.
func (l *List[T]) View(banner, empty string, detail []string) string {
	th := l.C.Theme
	var top []string
	if banner != "" {
		top = append(top, th.Banner.Render(table.Pad(" "+banner, l.width, false, th.Glyphs.Ellipsis)))
	}
	if l.filtering {
		prompt := th.Key.Render("/") + l.input.View()
		top = append(top, table.Pad(prompt, l.width, false, th.Glyphs.Ellipsis))
	}
	h := max(0, l.height-len(top)-l.footerLines())
	var bottom []string
	if l.footer != "" {
		bottom = []string{th.Dim.Render(table.Pad(" "+l.footer, l.width, false, th.Glyphs.Ellipsis))}
	}
	lw, dw := l.widths()
	var left []string
	switch {
	case !l.Split() && l.detailFocus:
		return join(top, block(detail, l.width, h, th.Glyphs.Ellipsis), bottom)
	case l.Table.Total() == 0 || (l.Table.Len() == 0 && empty != ""):
		left = block(append([]string{l.Table.HeaderView(), ""}, indent(theme.Wrap(empty, max(1, lw-3)))...), lw, h, th.Glyphs.Ellipsis)
	default:
		left = strings.Split(l.Table.View(!l.detailFocus), "\n")
	}
	if dw == 0 {
		return join(top, block(left, lw, h, th.Glyphs.Ellipsis), bottom)
	}
	right := block(detail, dw, h, th.Glyphs.Ellipsis)
	bar := th.Dim.Render(th.Glyphs.VBar)
	rows := make([]string, h)
	for i := range rows {
		rows[i] = table.Pad(at(left, i), lw, false, th.Glyphs.Ellipsis) + bar + right[i]
	}
	return join(top, rows, bottom)
}

func indent(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		out = append(out, "  "+line)
	}
	return out
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// block pads or cuts lines to exactly w×h.
func block(lines []string, w, h int, ellipsis string) []string {
	out := make([]string, h)
	for i := range out {
		out[i] = table.Pad(at(lines, i), w, false, ellipsis)
	}
	return out
}

func join(top, rows, bottom []string) string {
	return strings.Join(append(append(top, rows...), bottom...), "\n")
}
