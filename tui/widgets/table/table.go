// Package table is cairn-tui's generic ID-keyed table: the cursor is an ID,
// so inserts, removals, re-sorts and filters never move it to another row;
// the order is rebuilt only when data, filter or sort change; only the
// visible window renders, from a row cache.
//
// It is cairn's own, not bubbles' table, which every other widget comes
// from. bubbles/table keeps its cursor as an index into []Row, so a live
// event that inserts or removes a row above it moves the selection to
// another row; it takes every row as pre-formatted strings (SetRows), so
// each change formats all 10 000 artifacts where this table formats only
// the visible window and caches it by row version (a key press must answer
// in a frame), and it renders its window afresh on every cursor move; it has
// no drop order for narrow widths and no flex or fit columns; and its
// DefaultKeyMap binds d u f b and space, which here download, page nowhere
// or do nothing, while this table takes its keys from tui/keys.
package table

import (
	"cmp"
	"slices"
	"sort"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Column describes one column.
type Column[T any] struct {
	Title string
	// Min is the width; a Flex column grows into the slack up to Max (0: no
	// limit).
	Min, Max int
	Flex     bool
	// Fit makes a flex column take the slack first up to its widest cell,
	// and the rest only after the other flex columns.
	Fit   bool
	Right bool
	// Drop orders columns dropped when the width is short: 1 goes first;
	// 0 is never dropped.
	Drop int
	Cell func(T) string
	// Style colours a cell of a row that is not selected; nil uses the
	// row's style.
	Style func(T) (lipgloss.Style, bool)
	// Used makes the column sparse: it shows only while a row uses it
	// (a workspace's expiry), so a column no row fills takes no room.
	// Nil: always shown.
	Used func(T) bool
}

// Styles are the table's looks.
type Styles struct {
	Header, Selected, Changed lipgloss.Style
	Cursor, ChangedGlyph      string
	// MarkGlyph shows a marked row, in a second gutter column drawn only
	// while any row is marked.
	MarkGlyph string
	Ellipsis  string
}

// Model is a table of T keyed by ID.
type Model[T any] struct {
	id      func(T) string
	cols    []Column[T]
	styles  Styles
	key     func(T) Key
	reverse bool
	match   func(T) bool
	// Changed marks rows drawn with the changed glyph and style.
	Changed func(T) bool
	// Stamp is extra cache key of a row: whatever its cells read besides the
	// row itself (a pending word, the minute of its age).
	Stamp func(T) string

	items  map[string]T
	ver    map[string]uint64
	sorted []string
	order  []string
	// orders keeps the sorted IDs of each named order (SetSortAs) while the
	// rows stay as they were (dataVer): cycling the sort column over 10 000
	// rows sorts each order once.
	orders   map[orderName][]string
	ordersAt uint64 // the dataVer they were sorted at
	dataVer  uint64 // moves on every change of the rows
	name     string

	cursor string
	idx    int
	offset int

	// marks is the marked rows' IDs: kept across filters and sorts, dropped
	// with their rows.
	marks map[string]bool

	width, height int
	layout        []slot
	layoutVer     uint64
	cache         map[string]cachedRow
	widest        map[int]int // Fit column → its widest cell so far
	// users is, for each sparse column (Used), the rows that use it.
	users map[int]map[string]struct{}
}

// New returns an empty table.
func New[T any](id func(T) string, cols []Column[T], styles Styles) *Model[T] {
	m := &Model[T]{
		id: id, cols: cols, styles: styles,
		items: make(map[string]T), ver: make(map[string]uint64),
		cache: make(map[string]cachedRow), widest: make(map[int]int),
		marks: make(map[string]bool), users: make(map[int]map[string]struct{}),
	}
	for i, c := range cols {
		if c.Used != nil {
			m.users[i] = make(map[string]struct{})
		}
	}
	return m
}

// sparseShown is which sparse columns some row uses now.
func (m *Model[T]) sparseShown() map[int]bool {
	out := make(map[int]bool, len(m.users))
	for i, ids := range m.users {
		out[i] = len(ids) > 0
	}
	return out
}

// track records which rows use the sparse columns (gone: the rows
// removed; reset: rows are every row now) and lays out again when a
// column starts or stops being used.
func (m *Model[T]) track(rows []T, gone []string, reset bool) {
	if len(m.users) == 0 {
		return
	}
	before := m.sparseShown()
	for i, ids := range m.users {
		if reset {
			clear(ids)
		}
		for _, id := range gone {
			delete(ids, id)
		}
		for _, r := range rows {
			if m.cols[i].Used(r) {
				ids[m.id(r)] = struct{}{}
			} else {
				delete(ids, m.id(r))
			}
		}
	}
	if m.layout == nil {
		return
	}
	for i, shown := range m.sparseShown() {
		if shown != before[i] {
			m.relayout()
			return
		}
	}
}

// rebuildAbove is the batch size above which a change re-sorts everything.
const rebuildAbove = 256

// SetRows replaces every row.
func (m *Model[T]) SetRows(rows []T) {
	m.dataVer++
	clear(m.items)
	clear(m.widest)
	m.track(rows, nil, true)
	for _, r := range rows {
		id := m.id(r)
		m.items[id] = r
		m.ver[id]++
	}
	for id := range m.marks {
		if _, ok := m.items[id]; !ok {
			m.dropMarks(id)
		}
	}
	m.measure(rows)
	m.rebuild()
}

// measure grows the Fit columns' widest cells; a wider one re-lays out.
func (m *Model[T]) measure(rows []T) {
	grew := false
	for i, c := range m.cols {
		if !c.Fit {
			continue
		}
		for _, r := range rows {
			if w := ansi.StringWidth(c.Cell(r)); w > m.widest[i] {
				m.widest[i], grew = w, true
			}
		}
	}
	if grew && m.layout != nil {
		m.relayout()
	}
}

// Upsert adds or replaces rows.
func (m *Model[T]) Upsert(rows ...T) {
	if len(rows) == 0 {
		return
	}
	m.dataVer++
	m.measure(rows)
	m.track(rows, nil, false)
	if len(rows) > rebuildAbove {
		for _, r := range rows {
			id := m.id(r)
			m.items[id] = r
			m.ver[id]++
		}
		m.rebuild()
		return
	}
	for _, r := range rows {
		m.upsertOne(r)
	}
	m.fixCursor()
}

func (m *Model[T]) upsertOne(r T) {
	id := m.id(r)
	if old, ok := m.items[id]; ok && m.stays(old, r, id) {
		m.items[id] = r // same place in the order: nothing moves
		m.ver[id]++
		return
	}
	if old, ok := m.items[id]; ok {
		m.sorted = m.without(m.sorted, old, id)
		m.order = m.without(m.order, old, id)
	}
	m.items[id] = r
	m.ver[id]++
	m.sorted = m.insert(m.sorted, r, id)
	if m.match == nil || m.match(r) {
		m.order = m.insert(m.order, r, id)
	}
}

// stays reports whether r can replace old in place: its key still sits
// between its neighbours' and the filter says the same of both.
func (m *Model[T]) stays(old, r T, id string) bool {
	if m.match != nil && m.match(old) != m.match(r) {
		return false
	}
	i := m.search(m.sorted, old, id)
	if i >= len(m.sorted) || m.sorted[i] != id {
		return false
	}
	k := m.keyOf(r)
	if i > 0 {
		prev := m.sorted[i-1]
		if m.order3(m.keyOf(m.items[prev]), prev, k, id) > 0 {
			return false
		}
	}
	if i+1 < len(m.sorted) {
		next := m.sorted[i+1]
		if m.order3(k, id, m.keyOf(m.items[next]), next) > 0 {
			return false
		}
	}
	return true
}

// Remove drops rows by ID; a cursor on one moves to the row taking its
// index.
func (m *Model[T]) Remove(ids ...string) {
	if len(ids) == 0 {
		return
	}
	m.dataVer++
	m.track(nil, ids, false)
	if len(ids) > rebuildAbove {
		for _, id := range ids {
			delete(m.items, id)
			delete(m.ver, id)
			delete(m.cache, id)
		}
		m.dropMarks(ids...)
		m.rebuild()
		return
	}
	defer m.dropMarks(ids...)
	for _, id := range ids {
		old, ok := m.items[id]
		if !ok {
			continue
		}
		m.sorted = m.without(m.sorted, old, id)
		m.order = m.without(m.order, old, id)
		delete(m.items, id)
		delete(m.ver, id)
		delete(m.cache, id)
	}
	m.fixCursor()
}

// Key is a row's sort key: rows order by N, then S, then ID.
type Key struct {
	N int64
	S string
}

func (k Key) compare(o Key) int {
	if c := cmp.Compare(k.N, o.N); c != 0 {
		return c
	}
	return strings.Compare(k.S, o.S)
}

// SetSort orders rows by key (reversed if asked); ties go by ID.
func (m *Model[T]) SetSort(key func(T) Key, reverse bool) { m.SetSortAs("", key, reverse) }

// orderName is a named order, reversed or not.
type orderName struct {
	name    string
	reverse bool
}

// SetSortAs is SetSort for an order a screen names (its sort column): the
// sorted IDs are kept while the rows do not change, so coming back to an
// order costs a copy, not a sort. "" keeps nothing.
func (m *Model[T]) SetSortAs(name string, key func(T) Key, reverse bool) {
	m.key, m.reverse, m.name = key, reverse, name
	on := orderName{name, reverse}
	if kept, ok := m.orders[on]; ok && name != "" && m.ordersAt == m.dataVer {
		m.sorted = append(m.sorted[:0], kept...)
		m.refilter()
		return
	}
	m.rebuild()
}

func (m *Model[T]) keyOf(r T) Key {
	if m.key == nil {
		return Key{}
	}
	return m.key(r)
}

// SetFilter keeps only rows that match (nil: all).
func (m *Model[T]) SetFilter(match func(T) bool) {
	m.match = match
	m.refilter()
}

// order3 is the table order of two keyed rows: the key, reversed if asked,
// then the ID.
func (m *Model[T]) order3(a Key, aid string, b Key, bid string) int {
	if c := a.compare(b); c != 0 {
		if m.reverse {
			return -c
		}
		return c
	}
	return strings.Compare(aid, bid)
}

func (m *Model[T]) before(a T, aid string, b T, bid string) bool {
	return m.order3(m.keyOf(a), aid, m.keyOf(b), bid) < 0
}

// search returns the first index of ids not before (r, id).
func (m *Model[T]) search(ids []string, r T, id string) int {
	return sort.Search(len(ids), func(i int) bool {
		return !m.before(m.items[ids[i]], ids[i], r, id)
	})
}

func (m *Model[T]) insert(ids []string, r T, id string) []string {
	return slices.Insert(ids, m.search(ids, r, id), id)
}

// without removes id, located by its value old (still the stored one).
func (m *Model[T]) without(ids []string, old T, id string) []string {
	i := m.search(ids, old, id)
	if i < len(ids) && ids[i] == id {
		return slices.Delete(ids, i, i+1)
	}
	return ids
}

type entry struct {
	id  string
	key Key
}

// rebuild sorts every row once; keys are taken first, so no comparison
// reaches into a row.
func (m *Model[T]) rebuild() {
	all := make([]entry, 0, len(m.items))
	for id, r := range m.items {
		all = append(all, entry{id, m.keyOf(r)})
	}
	slices.SortFunc(all, func(a, b entry) int { return m.order3(a.key, a.id, b.key, b.id) })
	m.sorted = m.sorted[:0]
	for _, e := range all {
		m.sorted = append(m.sorted, e.id)
	}
	m.keep()
	m.refilter()
}

// keep records the current sorted IDs as their named order's.
func (m *Model[T]) keep() {
	if m.name == "" {
		return
	}
	if m.orders == nil || m.ordersAt != m.dataVer {
		m.orders, m.ordersAt = make(map[orderName][]string), m.dataVer
	}
	m.orders[orderName{m.name, m.reverse}] = slices.Clone(m.sorted)
}

func (m *Model[T]) refilter() {
	m.order = m.order[:0]
	for _, id := range m.sorted {
		if m.match == nil || m.match(m.items[id]) {
			m.order = append(m.order, id)
		}
	}
	m.fixCursor()
}

// fixCursor finds the cursor's row again; a vanished row leaves the cursor
// on the row that took its index.
func (m *Model[T]) fixCursor() {
	if r, ok := m.items[m.cursor]; ok && (m.match == nil || m.match(r)) {
		i := m.search(m.order, r, m.cursor)
		if i < len(m.order) && m.order[i] == m.cursor {
			m.idx = i
			m.scroll()
			return
		}
	}
	m.idx = max(0, min(m.idx, len(m.order)-1))
	m.cursor = ""
	if len(m.order) > 0 {
		m.cursor = m.order[m.idx]
	}
	m.scroll()
}
