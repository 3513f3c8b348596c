package table

// Marks are the rows a bulk action acts on. A mark belongs to a row ID: it
// survives filters, sorts and updates, and goes with its row. While any
// row is marked the gutter grows a column for the mark glyph, so a marked
// row under the cursor still shows it without colour.

// ToggleMark marks the row id, or unmarks a marked one; an unknown ID is
// ignored.
func (m *Model[T]) ToggleMark(id string) {
	if _, ok := m.items[id]; !ok {
		return
	}
	m.setMarks(func() {
		if m.marks[id] {
			delete(m.marks, id)
		} else {
			m.marks[id] = true
		}
	})
}

// MarkVisible marks every row the filter shows.
func (m *Model[T]) MarkVisible() {
	m.setMarks(func() {
		for _, id := range m.order {
			m.marks[id] = true
		}
	})
}

// ClearMarks unmarks every row.
func (m *Model[T]) ClearMarks() { m.setMarks(func() { clear(m.marks) }) }

// Marked is the marked rows in table order, hidden ones included; Marks
// counts them.
func (m *Model[T]) Marked() []T {
	out := make([]T, 0, len(m.marks))
	for _, id := range m.sorted {
		if m.marks[id] {
			out = append(out, m.items[id])
		}
	}
	return out
}

// Marks is how many rows are marked.
func (m *Model[T]) Marks() int { return len(m.marks) }

// IsMarked reports a marked row.
func (m *Model[T]) IsMarked(id string) bool { return m.marks[id] }

// dropMarks forgets the marks of rows that are gone.
func (m *Model[T]) dropMarks(ids ...string) {
	m.setMarks(func() {
		for _, id := range ids {
			delete(m.marks, id)
		}
	})
}

// setMarks applies change and lays out again when the mark column comes or
// goes.
func (m *Model[T]) setMarks(change func()) {
	before := m.gutter()
	change()
	if m.gutter() != before && m.layout != nil {
		m.relayout()
	}
}
