package table

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

type cachedRow struct {
	ver, layout uint64
	stamp       string
	changed     bool
	plain       string // cells without styles, for the selected row
	styled      string
}

// Pad cuts s to width w (wide runes counted, ellipsis added) and pads it
// with spaces; right aligns to the right.
func Pad(s string, w int, right bool, ellipsis string) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, ellipsis)
	}
	gap := w - ansi.StringWidth(s)
	if gap <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", gap) + s
	}
	return s + strings.Repeat(" ", gap)
}

// HeaderView is the column-header line.
func (m *Model[T]) HeaderView() string {
	var b strings.Builder
	b.WriteString(strings.Repeat(" ", m.gutter()))
	for _, s := range m.layout {
		c := m.cols[s.col]
		b.WriteString(" ")
		b.WriteString(Pad(c.Title, s.width, c.Right, m.styles.Ellipsis))
	}
	return m.styles.Header.Render(Pad(b.String(), m.width, false, m.styles.Ellipsis))
}

// Rows renders the visible window: the rows under the header, at most
// height-1 of them.
func (m *Model[T]) Rows(focused bool) []string {
	end := min(len(m.order), m.offset+m.Page())
	out := make([]string, 0, end-m.offset)
	for i := m.offset; i < end; i++ {
		out = append(out, m.row(m.order[i], i == m.idx && focused, i == m.idx))
	}
	return out
}

// View is the header line and the visible rows, padded to the height.
func (m *Model[T]) View(focused bool) string {
	lines := append([]string{m.HeaderView()}, m.Rows(focused)...)
	for len(lines) < m.height {
		lines = append(lines, strings.Repeat(" ", m.width))
	}
	return strings.Join(lines, "\n")
}

func (m *Model[T]) row(id string, selected, atCursor bool) string {
	r := m.items[id]
	c := m.cached(id, r)
	gutter := " "
	switch {
	case atCursor:
		gutter = m.styles.Cursor
	case c.changed:
		gutter = m.styles.ChangedGlyph
	}
	if len(m.marks) > 0 {
		mark := " "
		if m.marks[id] {
			mark = m.styles.MarkGlyph
		}
		gutter += mark
	}
	if selected {
		return m.styles.Selected.Render(gutter + c.plain)
	}
	if atCursor {
		return gutter + c.plain
	}
	return gutter + c.styled
}

func (m *Model[T]) cached(id string, r T) cachedRow {
	stamp := ""
	if m.Stamp != nil {
		stamp = m.Stamp(r)
	}
	changed := m.Changed != nil && m.Changed(r)
	c, ok := m.cache[id]
	if ok && c.ver == m.ver[id] && c.layout == m.layoutVer && c.stamp == stamp && c.changed == changed {
		return c
	}
	c = cachedRow{ver: m.ver[id], layout: m.layoutVer, stamp: stamp, changed: changed}
	c.plain, c.styled = m.render(r, changed)
	m.cache[id] = c
	return c
}

// render draws a row's cells: once plain (restyled as the selected row)
// and once with cell and row styles.
func (m *Model[T]) render(r T, changed bool) (string, string) {
	var plain, styled strings.Builder
	rowStyle, hasRow := lipgloss.Style{}, false
	if changed {
		rowStyle, hasRow = m.styles.Changed, true
	}
	used := m.gutter()
	for _, s := range m.layout {
		c := m.cols[s.col]
		text := " " + Pad(c.Cell(r), s.width, c.Right, m.styles.Ellipsis)
		used += 1 + s.width
		plain.WriteString(text)
		st, ok := rowStyle, hasRow
		if c.Style != nil {
			if cs, has := c.Style(r); has {
				st, ok = cs, true
			}
		}
		if ok {
			text = st.Render(text)
		}
		styled.WriteString(text)
	}
	if rest := m.width - used; rest > 0 {
		plain.WriteString(strings.Repeat(" ", rest))
		styled.WriteString(strings.Repeat(" ", rest))
	}
	p, s := plain.String(), styled.String()
	if used > m.width {
		p = ansi.Truncate(p, m.width-m.gutter(), "")
		s = ansi.Truncate(s, m.width-m.gutter(), "")
	}
	return p, s
}
