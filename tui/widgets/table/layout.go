package table

// slot is a shown column and its width.
type slot struct {
	col   int
	width int
}

// SetSize lays the columns out for width and height (height includes the
// column-header line). Columns drop in their Drop order until the rest
// fit; flex columns share the slack in column order.
func (m *Model[T]) SetSize(width, height int) {
	if width == m.width && height == m.height && m.layout != nil {
		return
	}
	m.width, m.height = width, height
	m.layout = m.computeLayout(width)
	m.layoutVer++
	clear(m.cache)
	m.scroll()
}

// Width and Height are the current size.
func (m *Model[T]) Width() int  { return m.width }
func (m *Model[T]) Height() int { return m.height }

func (m *Model[T]) computeLayout(width int) []slot {
	shown := make([]bool, len(m.cols))
	for i := range shown {
		shown[i] = true
	}
	avail := width - gutterWidth
	for m.needed(shown) > avail {
		victim := m.nextDrop(shown)
		if victim < 0 {
			break
		}
		shown[victim] = false
	}
	var out []slot
	for i, c := range m.cols {
		if shown[i] {
			out = append(out, slot{col: i, width: c.Min})
		}
	}
	m.share(out, avail-m.needed(shown))
	return out
}

// gutterWidth is the cursor/changed glyph column.
const gutterWidth = 1

// needed is the width of the shown columns at their minimum, each with the
// space before it.
func (m *Model[T]) needed(shown []bool) int {
	n := 0
	for i, c := range m.cols {
		if shown[i] {
			n += c.Min + 1
		}
	}
	return n
}

// nextDrop is the shown column with the lowest positive Drop, or -1.
func (m *Model[T]) nextDrop(shown []bool) int {
	victim := -1
	for i, c := range m.cols {
		if shown[i] && c.Drop > 0 && (victim < 0 || c.Drop < m.cols[victim].Drop) {
			victim = i
		}
	}
	return victim
}

func (m *Model[T]) share(out []slot, slack int) {
	for i := range out {
		c := m.cols[out[i].col]
		if slack <= 0 || !c.Flex {
			continue
		}
		grow := slack
		if c.Max > 0 {
			grow = min(grow, c.Max-c.Min)
		}
		out[i].width += grow
		slack -= grow
	}
}
