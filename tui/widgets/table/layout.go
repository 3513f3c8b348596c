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
	m.relayout()
}

func (m *Model[T]) relayout() {
	m.layout = planner[T]{cols: m.cols, widest: m.widest, gutter: m.gutter(), unused: m.unused()}.layout(m.width)
	m.layoutVer++
	clear(m.cache)
	m.scroll()
}

// Width and Height are the current size.
func (m *Model[T]) Width() int  { return m.width }
func (m *Model[T]) Height() int { return m.height }

// unused is the sparse columns no row uses, which do not show.
func (m *Model[T]) unused() map[int]bool {
	out := make(map[int]bool)
	for i, ids := range m.users {
		if len(ids) == 0 {
			out[i] = true
		}
	}
	return out
}

// planner lays columns out: which show, and how wide.
type planner[T any] struct {
	cols   []Column[T]
	widest map[int]int // each column's widest cell, by index
	gutter int
	unused map[int]bool // sparse columns no row uses
}

// layout drops columns in their Drop order until the rest fit width;
// flex columns share the slack in column order.
func (m planner[T]) layout(width int) []slot {
	shown := make([]bool, len(m.cols))
	for i := range shown {
		shown[i] = !m.unused[i]
	}
	avail := width - m.gutter
	for m.needed(shown) > avail {
		victim := m.nextDrop(shown, false)
		if victim < 0 {
			break
		}
		shown[victim] = false
	}
	for {
		out := m.place(shown, avail)
		victim := m.nextDrop(shown, true)
		if !m.fitShort(out) || victim < 0 {
			return out
		}
		shown[victim] = false // a whole name beats a flexible column
	}
}

// place sizes the shown columns.
func (m planner[T]) place(shown []bool, avail int) []slot {
	var out []slot
	for i, c := range m.cols {
		if shown[i] {
			out = append(out, slot{col: i, width: c.Min})
		}
	}
	m.share(out, avail-m.needed(shown))
	return out
}

// fitShort reports a Fit column narrower than its widest cell.
func (m planner[T]) fitShort(out []slot) bool {
	for _, s := range out {
		c := m.cols[s.col]
		if c.Fit && s.width < min(limit(c), m.widest[s.col]) {
			return true
		}
	}
	return false
}

// gutter is the width of the glyph columns left of the cells: the
// cursor/changed glyph, and the mark while any row is marked.
func (m *Model[T]) gutter() int {
	if len(m.marks) > 0 {
		return 2
	}
	return 1
}

// needed is the width of the shown columns at their minimum, each with the
// space before it.
func (m planner[T]) needed(shown []bool) int {
	n := 0
	for i, c := range m.cols {
		if shown[i] {
			n += c.Min + 1
		}
	}
	return n
}

// nextDrop is the shown column with the lowest positive Drop (among the
// flexible, non-Fit ones when flexOnly), or -1.
func (m planner[T]) nextDrop(shown []bool, flexOnly bool) int {
	victim := -1
	for i, c := range m.cols {
		if flexOnly && (!c.Flex || c.Fit) {
			continue
		}
		if shown[i] && c.Drop > 0 && (victim < 0 || c.Drop < m.cols[victim].Drop) {
			victim = i
		}
	}
	return victim
}

// share gives the slack away: Fit columns up to their widest cell, then
// the other flex columns, then Fit columns up to their Max.
func (m planner[T]) share(out []slot, slack int) {
	slack = m.grow(out, slack, func(i int, c Column[T]) (int, bool) {
		return min(limit(c), max(c.Min, m.widest[out[i].col])), c.Fit
	})
	slack = m.grow(out, slack, func(_ int, c Column[T]) (int, bool) { return limit(c), c.Flex && !c.Fit })
	m.grow(out, slack, func(_ int, c Column[T]) (int, bool) { return limit(c), c.Fit })
}

// limit is a column's widest allowed width (0 Max: unlimited).
func limit[T any](c Column[T]) int {
	if c.Max == 0 {
		return 1 << 20
	}
	return c.Max
}

// grow widens the chosen columns toward their target and returns the
// slack left.
func (m planner[T]) grow(out []slot, slack int, target func(int, Column[T]) (int, bool)) int {
	for i := range out {
		want, ok := target(i, m.cols[out[i].col])
		if !ok || slack <= 0 {
			continue
		}
		add := min(slack, max(0, want-out[i].width))
		out[i].width += add
		slack -= add
	}
	return slack
}
