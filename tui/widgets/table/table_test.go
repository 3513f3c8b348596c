package table_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/widgets/table"
)

type item struct {
	id, name string
	n        int
}

func newTable(rows ...item) *table.Model[item] {
	cols := []table.Column[item]{
		{Title: "NAME", Min: 6, Max: 10, Flex: true, Cell: func(i item) string { return i.name }},
		{Title: "N", Min: 4, Right: true, Drop: 2, Cell: func(i item) string { return fmt.Sprint(i.n) }},
		{Title: "NOTE", Min: 8, Flex: true, Drop: 1, Cell: func(item) string { return "note" }},
	}
	tb := table.New(func(i item) string { return i.id }, cols, table.Styles{Cursor: ">", ChangedGlyph: "*", Ellipsis: "~"})
	tb.SetSort(func(i item) table.Key { return table.Key{S: i.name} }, false)
	tb.SetRows(rows)
	tb.SetSize(40, 10)
	return tb
}

func abc() []item {
	return []item{{"1", "alpha", 3}, {"2", "bravo", 1}, {"3", "charlie", 2}, {"4", "delta", 4}}
}

func TestCursorKeptByID(t *testing.T) {
	t.Parallel()
	t.Run("ReSort", func(t *testing.T) {
		t.Parallel()
		tb := newTable(abc()...)
		tb.MoveBy(1) // bravo
		tb.SetSort(func(i item) table.Key { return table.Key{N: int64(i.n)} }, false)
		require.Equal(t, "2", tb.CursorID())
		tb.SetSort(func(i item) table.Key { return table.Key{N: int64(i.n)} }, true)
		require.Equal(t, "2", tb.CursorID())
	})
	t.Run("Insert", func(t *testing.T) {
		t.Parallel()
		tb := newTable(abc()...)
		tb.MoveBy(2) // charlie
		tb.Upsert(item{"0", "aardvark", 0})
		require.Equal(t, "3", tb.CursorID())
		tb.Upsert(item{"3", "zulu", 2}) // its own row moves
		require.Equal(t, "3", tb.CursorID())
		tb.Bottom()
		require.Equal(t, "3", tb.CursorID())
	})
	t.Run("RemoveMovesToTheRowTakingItsIndex", func(t *testing.T) {
		t.Parallel()
		tb := newTable(abc()...)
		tb.MoveBy(1)
		tb.Remove("2")
		require.Equal(t, "3", tb.CursorID())
		tb.Bottom()
		tb.Remove("4")
		require.Equal(t, "3", tb.CursorID(), "the last row: the one above")
	})
	t.Run("Filter", func(t *testing.T) {
		t.Parallel()
		tb := newTable(abc()...)
		tb.MoveBy(3) // delta
		tb.SetFilter(func(i item) bool { return strings.Contains(i.name, "a") })
		require.Equal(t, "4", tb.CursorID())
		tb.SetFilter(func(i item) bool { return i.name == "bravo" })
		require.Equal(t, "2", tb.CursorID())
		require.Equal(t, 1, tb.Len())
		require.Equal(t, 4, tb.Total())
	})
	t.Run("BatchRebuild", func(t *testing.T) {
		t.Parallel()
		var rows []item
		for i := range 1000 {
			rows = append(rows, item{fmt.Sprint(i), fmt.Sprintf("n%04d", i), i})
		}
		tb := newTable(rows...)
		tb.MoveBy(500)
		id := tb.CursorID()
		var up []item
		for i := range 300 {
			up = append(up, item{fmt.Sprint(i), fmt.Sprintf("z%04d", i), i})
		}
		tb.Upsert(up...)
		require.Equal(t, id, tb.CursorID())
		r, _ := tb.Get("0")
		require.Equal(t, "z0000", r.name)
	})
}

func TestLayoutDropsInOrder(t *testing.T) {
	t.Parallel()
	tb := newTable(abc()...)
	for w, want := range map[int]string{
		40: "  NAME          N NOTE", // NAME at its max, NOTE takes the rest
		20: "  NAME          N",      // NOTE dropped first
		12: "  NAME",                 // then N
	} {
		tb.SetSize(w, 5)
		require.Equal(t, want, strings.TrimRight(tb.HeaderView(), " "), "width %d", w)
	}
}

func TestViewWindow(t *testing.T) {
	t.Parallel()
	var rows []item
	for i := range 50 {
		rows = append(rows, item{fmt.Sprintf("%02d", i), fmt.Sprintf("row%02d", i), i})
	}
	tb := newTable(rows...)
	tb.SetSize(30, 5) // header + 4 rows
	tb.MoveBy(10)
	lines := strings.Split(tb.View(true), "\n")
	require.Len(t, lines, 5)
	require.True(t, strings.HasPrefix(lines[4], ">"), "the cursor row is the last visible")
	require.Contains(t, lines[4], "row10")
	for _, l := range lines {
		require.Equal(t, 30, len([]rune(l)))
	}
}

func TestPadCutsWideRunes(t *testing.T) {
	t.Parallel()
	require.Equal(t, "日本…", table.Pad("日本語テキスト", 5, false, "…"))
	require.Equal(t, "  ab", table.Pad("ab", 4, true, "…"))
}

func TestFitColumnTakesRoomFromFlexibleOnes(t *testing.T) {
	t.Parallel()
	cols := []table.Column[item]{
		{Title: "NAME", Min: 6, Max: 30, Flex: true, Fit: true, Cell: func(i item) string { return i.name }},
		{Title: "N", Min: 4, Right: true, Drop: 2, Cell: func(i item) string { return fmt.Sprint(i.n) }},
		{Title: "NOTE", Min: 8, Flex: true, Drop: 1, Cell: func(item) string { return "note" }},
	}
	tb := table.New(func(i item) string { return i.id }, cols, table.Styles{Cursor: ">", Ellipsis: "~"})
	tb.SetRows([]item{{"1", "short", 1}})
	tb.SetSize(26, 5)
	require.Equal(t, "  NAME      N NOTE", strings.TrimRight(tb.HeaderView(), " "), "both fit")
	tb.Upsert(item{"2", "a-rather-long-name", 2})
	require.Equal(t, "  NAME                   N", strings.TrimRight(tb.HeaderView(), " "), "NOTE gave way to the whole name")
}

func TestUpsertInPlaceOrMoved(t *testing.T) {
	t.Parallel()
	tb := newTable(abc()...)
	tb.MoveBy(1)                         // bravo
	tb.Upsert(item{"2", "bravo", 99})    // same key: stays
	tb.Upsert(item{"1", "beta", 3})      // still between its neighbours
	tb.Upsert(item{"4", "able", 4})      // moves to the top
	require.Equal(t, "2", tb.CursorID()) // bravo, wherever it is
	tb.Top()
	var got []string
	for range tb.Len() {
		r, _ := tb.Cursor()
		got = append(got, r.name)
		tb.MoveBy(1)
	}
	require.Equal(t, []string{"able", "beta", "bravo", "charlie"}, got)
}

// A sparse column shows only while a row uses it: it comes with the first
// row that does, by any change, and goes with the last, and it drops in
// its order like any other.
func TestSparseColumnShowsWhileUsed(t *testing.T) {
	t.Parallel()
	cols := []table.Column[item]{
		{Title: "NAME", Min: 6, Max: 10, Flex: true, Cell: func(i item) string { return i.name }},
		{Title: "DUE", Min: 4, Drop: 1, Cell: func(i item) string { return fmt.Sprint(i.n) }, Used: func(i item) bool { return i.n > 0 }},
		{Title: "N", Min: 4, Right: true, Drop: 2, Cell: func(i item) string { return fmt.Sprint(i.n) }},
	}
	tb := table.New(func(i item) string { return i.id }, cols, table.Styles{Cursor: ">", ChangedGlyph: "*", Ellipsis: "~"})
	tb.SetSort(func(i item) table.Key { return table.Key{S: i.name} }, false)
	tb.SetRows([]item{{"1", "alpha", 0}, {"2", "bravo", 0}})
	tb.SetSize(40, 5)
	header := func() string { return strings.TrimRight(tb.HeaderView(), " ") }
	require.Equal(t, "  NAME          N", header(), "no row uses DUE")
	tb.Upsert(item{"2", "bravo", 3})
	require.Equal(t, "  NAME       DUE     N", header(), "a row uses it now")
	tb.Upsert(item{"3", "charlie", 5})
	tb.Remove("2")
	require.Equal(t, "  NAME       DUE     N", header(), "another row still uses it")
	tb.Upsert(item{"3", "charlie", 0})
	require.Equal(t, "  NAME          N", header(), "the last user stopped")
	tb.SetRows([]item{{"4", "delta", 1}})
	require.Equal(t, "  NAME       DUE     N", header(), "a new set of rows")
	tb.SetSize(16, 5)
	require.Equal(t, "  NAME         N", header(), "dropped in its order when short")
}
