package table_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/widgets/table"
)

func names(rows []item) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.name
	}
	return out
}

func markedTable() *table.Model[item] {
	cols := []table.Column[item]{{Title: "NAME", Min: 6, Flex: true, Cell: func(i item) string { return i.name }}}
	tb := table.New(func(i item) string { return i.id }, cols,
		table.Styles{Cursor: ">", ChangedGlyph: "*", MarkGlyph: "#", Ellipsis: "~"})
	tb.SetSort(func(i item) table.Key { return table.Key{S: i.name} }, false)
	tb.SetRows(abc())
	tb.SetSize(20, 6)
	return tb
}

func TestMarks(t *testing.T) {
	t.Parallel()
	t.Run("ToggleShowsTheGlyphUnderTheCursorToo", func(t *testing.T) {
		t.Parallel()
		tb := markedTable()
		require.Equal(t, "  NAME", strings.TrimRight(tb.HeaderView(), " "), "no mark column without marks")
		tb.ToggleMark("1")
		rows := tb.Rows(true)
		require.True(t, strings.HasPrefix(rows[0], "># alpha"), rows[0])
		require.True(t, strings.HasPrefix(rows[1], "   bravo"), rows[1])
		require.Equal(t, "   NAME", strings.TrimRight(tb.HeaderView(), " "))
		tb.ToggleMark("1")
		require.Zero(t, tb.Marks())
		require.True(t, strings.HasPrefix(tb.Rows(true)[0], "> alpha"), "the column goes with the last mark")
	})
	t.Run("MarkVisibleTakesOnlyTheFilteredRows", func(t *testing.T) {
		t.Parallel()
		tb := markedTable()
		tb.SetFilter(func(i item) bool { return strings.Contains(i.name, "l") })
		tb.MarkVisible()
		tb.SetFilter(nil)
		require.Equal(t, []string{"alpha", "charlie", "delta"}, names(tb.Marked()))
		require.False(t, tb.IsMarked("2"))
	})
	t.Run("SurviveSortAndUpdateGoWithTheirRows", func(t *testing.T) {
		t.Parallel()
		tb := markedTable()
		tb.ToggleMark("2")
		tb.ToggleMark("4")
		tb.SetSort(func(i item) table.Key { return table.Key{N: int64(-i.n)} }, false)
		tb.Upsert(item{"2", "bravo2", 9})
		require.Equal(t, []string{"bravo2", "delta"}, names(tb.Marked()), "table order: -9 before -4")
		tb.Remove("4")
		require.Equal(t, []string{"bravo2"}, names(tb.Marked()))
		tb.SetRows([]item{{"1", "alpha", 3}})
		require.Zero(t, tb.Marks(), "a replaced set keeps no mark of a row it lost")
	})
	t.Run("UnknownIDAndClear", func(t *testing.T) {
		t.Parallel()
		tb := markedTable()
		tb.ToggleMark("nope")
		require.Zero(t, tb.Marks())
		tb.MarkVisible()
		require.Equal(t, 4, tb.Marks())
		tb.ClearMarks()
		require.Empty(t, tb.Marked())
	})
}

func TestClick(t *testing.T) {
	t.Parallel()
	tb := markedTable() // height 6: the header and five rows
	require.False(t, tb.Click(0), "the column header")
	require.True(t, tb.Click(3))
	require.Equal(t, "3", tb.CursorID(), "line 3 draws the third row: charlie")
	require.False(t, tb.Click(5), "no row drawn below the last")
	require.Equal(t, "3", tb.CursorID())
}

func TestNamedOrdersKept(t *testing.T) {
	t.Parallel()
	calls := 0
	byN := func(i item) table.Key { calls++; return table.Key{N: int64(i.n)} }
	byName := func(i item) table.Key { return table.Key{S: i.name} }
	tb := newTable(abc()...)
	tb.SetSortAs("n", byN, false)
	tb.SetSortAs("name", byName, false)
	tb.SetSortAs("n", byN, false)
	require.Equal(t, []string{"bravo", "charlie", "alpha", "delta"}, names(rowsOf(tb)), "a kept order is the same order")
	tb.Upsert(item{"2", "bravo", 9})
	tb.SetSortAs("name", byName, false)
	tb.SetSortAs("n", byN, false)
	require.Equal(t, []string{"charlie", "alpha", "delta", "bravo"}, names(rowsOf(tb)), "a changed row sorts again")
	tb.SetSortAs("n", byN, true)
	require.Equal(t, []string{"bravo", "delta", "alpha", "charlie"}, names(rowsOf(tb)), "reversed is an order of its own")

	many := make([]item, 1000)
	for i := range many {
		many[i] = item{fmt.Sprint(i), fmt.Sprintf("n%04d", i), 1000 - i}
	}
	big := newTable(many...)
	big.SetSortAs("n", byN, false)
	big.SetSortAs("name", byName, false)
	calls = 0
	big.SetSortAs("n", byN, false)
	require.Less(t, calls, 50, "a kept order is not sorted again: only the cursor's row is looked up")
	big.Upsert(item{"7", "n0007", 5})
	big.SetSortAs("name", byName, false)
	calls = 0
	big.SetSortAs("n", byN, false)
	require.GreaterOrEqual(t, calls, 1000, "after a change every row's key is read again")
}

// rowsOf is the table's rows in its order.
func rowsOf(tb *table.Model[item]) []item {
	var out []item
	tb.Top()
	for range tb.Len() {
		r, _ := tb.Cursor()
		out = append(out, r)
		tb.MoveBy(1)
	}
	return out
}
