package table_test

import (
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
