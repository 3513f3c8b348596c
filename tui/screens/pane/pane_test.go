package pane

import (
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screens/screentest"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii) // no SGR of the theme's own
	os.Exit(m.Run())
}

type testRow struct{ id string }

func (r testRow) RowID() string     { return r.id }
func (r testRow) FilterKey() string { return r.id }

func newList(t *testing.T) *List[testRow] {
	c, _ := screentest.New(t)
	tbl := table.New(testRow.RowID, []table.Column[testRow]{{Title: "ID", Min: 8, Cell: testRow.RowID}}, table.Styles{})
	tbl.SetRows([]testRow{{"ab"}, {"ba"}, {"cc"}})
	l := New(c, tbl)
	l.SetSize(40, 10)
	return l
}

// The filter input: every edit filters at once, enter keeps the query,
// esc clears it, and / again edits the kept query at its end.
func TestFilterInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		keys      []string // "/" opens the filter
		capturing bool
		crumb     string
		prompt    string // the first line of the view, while capturing
	}{
		{"Opens", []string{"/"}, true, "/ 3 of 3", "/_"},
		{"EachEditFilters", []string{"/", "b"}, true, "/b 2 of 3", "/b_"},
		{"Narrows", []string{"/", "a", "b"}, true, "/ab 1 of 3", "/ab_"},
		{"Backspace", []string{"/", "a", "b", "backspace"}, true, "/a 2 of 3", "/a_"},
		{"EnterKeeps", []string{"/", "c", "enter"}, false, "/c 1 of 3", ""},
		{"EscClears", []string{"/", "c", "esc"}, false, "", ""},
		{"EscAfterEnterClears", []string{"/", "c", "enter", "/", "esc"}, false, "", ""},
		{"ReopenEditsAtEnd", []string{"/", "a", "left", "enter", "/", "b"}, true, "/ab 1 of 3", "/ab_"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := newList(t)
			for _, k := range tc.keys {
				if k == "/" && !l.Capturing() {
					handled, _ := l.Nav(keys.Filter)
					require.True(t, handled)
					continue
				}
				l.FilterKey(modeltest.Key(k))
			}
			require.Equal(t, tc.capturing, l.Capturing())
			require.Equal(t, tc.crumb, l.FilterCrumb())
			first, _, _ := strings.Cut(l.View("", "", nil), "\n")
			if tc.capturing {
				require.Equal(t, tc.prompt, strings.TrimRight(first, " "))
			} else {
				require.NotContains(t, first, "/", "no prompt once the filter is left")
			}
		})
	}
}

func TestParagraph(t *testing.T) {
	t.Parallel()
	c, _ := screentest.New(t)
	for _, tc := range []struct {
		name, text string
		width      int
		want       []string // the lines after the label, spaces trimmed
	}{
		{"Plain", "one two", 40, []string{"one two"}},
		{"Lines", "one\ntwo\r\nthree\n\n", 40, []string{"one", "two", "three"}},
		{"Wraps", "aaaa bbbb cccc", 7, []string{"aaaa", "bbbb", "cccc"}},
		{"Escapes", screentest.Hostile + "\n\t" + screentest.Hostile, 40, []string{screentest.HostileShown, screentest.HostileShown}},
		{"LoneCR", "a\rb", 40, []string{"a^Mb"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			lines := Paragraph(c.Theme, "Label", tc.text, tc.width)
			require.Equal(t, []string{"", " Label"}, lines[:2])
			got := make([]string, 0, len(lines)-2)
			for _, l := range lines[2:] {
				got = append(got, strings.TrimSpace(l))
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		in   *string
		want string
	}{
		{"Nil", nil, ""},
		{"OneLine", ptr("first"), "first"},
		{"LF", ptr("first\nsecond"), "first"},
		{"CRLF", ptr("first\r\nsecond"), "first"},
		{"Escapes", ptr(screentest.Hostile + "\nsecond"), screentest.HostileShown},
		{"Tab", ptr("a\tb"), "a   b"},
	} {
		require.Equal(t, tc.want, Line(tc.in), tc.name)
	}
}

// pagedList is a list read two rows a page, at most six, whose requests
// are recorded as "first" or "next".
func pagedList(t *testing.T) (*Pages[testRow], *[]string) {
	t.Helper()
	var asked []string
	p := NewPages(newList(t), Paging{Size: 2, Most: 6, Noun: "rows", Bound: "no more rows here"}, func(next bool) tea.Cmd {
		asked = append(asked, map[bool]string{false: "first", true: "next"}[next])
		return nil
	})
	p.list.SetSize(80, 10)
	return p, &asked
}

func rows(ids ...string) []testRow {
	out := make([]testRow, len(ids))
	for i, id := range ids {
		out[i] = testRow{id}
	}
	return out
}

// Pages: the next page waits for the cursor near the end, a refresh while
// a page runs waits for it and keeps the cursor's row, the footer says
// what remains, and the bound stops the paging.
func TestPages(t *testing.T) {
	t.Parallel()
	p, asked := pagedList(t)
	p.Restart("")
	p.Take(false, rows("a", "b"), true, nil)
	require.Equal(t, []string{"first"}, *asked, "a full page waits for the cursor")
	require.Equal(t, "2+", p.Count())
	require.Contains(t, p.list.View("", "", nil), "more rows: moving down lists the next 2")
	p.Nav(keys.Down)
	require.Equal(t, []string{"first", "next"}, *asked, "the cursor came within a page of the end")
	require.Nil(t, p.Refresh(), "a refresh while a page runs waits")
	p.Take(true, rows("c", "d"), true, nil)
	require.Equal(t, []string{"first", "next", "first"}, *asked, "the refresh that waited")
	require.Equal(t, 2, p.Req())
	p.Take(false, rows("x", "a", "b"), true, nil)
	require.Equal(t, "b", p.list.Table.CursorID(), "the cursor keeps its row")
	p.Nav(keys.Bottom)
	p.Take(true, rows("c", "d", "e"), true, nil)
	require.Equal(t, 6, p.Loaded())
	require.Contains(t, p.list.View("", "", nil), "no more rows here")
	p.Nav(keys.Bottom)
	require.Len(t, *asked, 4, "nothing past the bound")
}

// RefreshTo puts the cursor on a row just written once it is listed, even
// when the refresh waited for a page running then.
func TestPagesRefreshTo(t *testing.T) {
	t.Parallel()
	p, asked := pagedList(t)
	p.Restart("")
	p.Take(false, rows("a", "b"), false, nil)
	require.Equal(t, "a", p.list.Table.CursorID())
	p.RefreshTo("new")
	p.Take(false, rows("a", "b", "new"), false, nil)
	require.Equal(t, "new", p.list.Table.CursorID(), "on the row written")

	p.Refresh()
	require.Nil(t, p.RefreshTo("c"), "a refresh while a page runs waits")
	p.Take(false, rows("a", "b", "new"), false, nil)
	require.Equal(t, []string{"first", "first", "first", "first"}, *asked, "then lists again")
	p.Take(false, rows("a", "b", "c", "new"), false, nil)
	require.Equal(t, "c", p.list.Table.CursorID(), "the row asked for survived the wait")
}
