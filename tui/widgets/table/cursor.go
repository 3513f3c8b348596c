package table

// Len is the number of rows shown (after the filter).
func (m *Model[T]) Len() int { return len(m.order) }

// Total is the number of rows held.
func (m *Model[T]) Total() int { return len(m.items) }

// Cursor returns the row under the cursor.
func (m *Model[T]) Cursor() (T, bool) {
	r, ok := m.items[m.cursor]
	if !ok || len(m.order) == 0 {
		var zero T
		return zero, false
	}
	return r, true
}

// CursorIndex is the cursor's row among those shown.
func (m *Model[T]) CursorIndex() int { return m.idx }

// CursorID is the ID under the cursor, or "".
func (m *Model[T]) CursorID() string { return m.cursor }

// Get returns a held row.
func (m *Model[T]) Get(id string) (T, bool) {
	r, ok := m.items[id]
	return r, ok
}

// SetCursor moves the cursor to id when it is shown.
func (m *Model[T]) SetCursor(id string) {
	if _, ok := m.items[id]; ok {
		m.cursor = id
		m.fixCursor()
	}
}

// MoveBy moves the cursor n rows (negative: up), clamped.
func (m *Model[T]) MoveBy(n int) {
	if len(m.order) == 0 {
		return
	}
	m.idx = max(0, min(m.idx+n, len(m.order)-1))
	m.cursor = m.order[m.idx]
	m.scroll()
}

// Top moves to the first row.
func (m *Model[T]) Top() { m.MoveBy(-len(m.order)) }

// Bottom moves to the last row.
func (m *Model[T]) Bottom() { m.MoveBy(len(m.order)) }

// Page is the number of rows a page holds.
func (m *Model[T]) Page() int { return max(1, m.height-1) }

// scroll keeps the cursor inside the visible window, moving it as little
// as possible.
func (m *Model[T]) scroll() {
	page := m.Page()
	switch {
	case m.idx < m.offset:
		m.offset = m.idx
	case m.idx >= m.offset+page:
		m.offset = m.idx - page + 1
	}
	m.offset = max(0, min(m.offset, len(m.order)-page))
}

// Click puts the cursor on the row drawn at line of the table's view (0
// is the column header); false when no row is drawn there.
func (m *Model[T]) Click(line int) bool {
	i := m.offset + line - 1
	if line < 1 || line >= m.height || i >= len(m.order) {
		return false
	}
	m.idx, m.cursor = i, m.order[i]
	m.scroll()
	return true
}
