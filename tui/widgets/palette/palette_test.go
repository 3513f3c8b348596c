package palette_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/widgets/palette"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// fleet is a Source over three workspaces, their artifacts and two
// contexts; calls counts each (command, argIndex) asked.
type fleet struct {
	calls map[string]int
	ws    []string
}

func newFleet() *fleet {
	return &fleet{calls: map[string]int{}, ws: []string{"ws-alpha", "ws-alpine", "ws-beta"}}
}

func (f *fleet) source(cmd string, arg int) []palette.Candidate {
	f.calls[cmd+"/"+strconv.Itoa(arg)]++
	var out []palette.Candidate
	switch {
	case cmd == "art" && arg == 0:
		for _, w := range f.ws {
			for _, a := range []string{"report_csv", "daily.json"} {
				out = append(out, palette.Candidate{Value: w + "/" + a, Detail: "artifact in " + w})
			}
		}
	case cmd == "ctx":
		out = []palette.Candidate{{Value: "lab", Detail: "context"}, {Value: "prod", Detail: "context"}}
	case arg == 0: // ws, files, audit, sweep
		for _, w := range f.ws {
			out = append(out, palette.Candidate{Value: w, Detail: "workspace"})
		}
	}
	return out
}

func setup(t *testing.T, h *palette.History, src palette.Source) *palette.Model {
	t.Helper()
	th := modeltest.Theme()
	m := palette.New(th, h, src)
	m.SetSize(120, 30)
	return m
}

// ran is the command and arguments the palette ended with.
func ran(t *testing.T, m *palette.Model) (string, []string) {
	t.Helper()
	r, done := m.Result()
	require.True(t, done, "the palette is still open on %q", m.Value())
	c, args, ok := palette.Invocation(r)
	require.True(t, ok)
	return c.Name, args
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line, cmd string
		args      []string
		err       string
	}{
		{line: "ws ws-alpha", cmd: "ws", args: []string{"ws-alpha"}},
		{line: ":q", cmd: "q"},
		{line: "  audit  ", cmd: "audit"},
		{line: "sweep ws-beta", cmd: "sweep", args: []string{"ws-beta"}},
		{line: "files ws-a  my dir/a  b ", cmd: "files", args: []string{"ws-a", "my dir/a  b"}},
		{line: "files ws-a", cmd: "files", args: []string{"ws-a"}},
		{line: "ws", err: ":ws needs NAME — :ws NAME"},
		{line: "files", err: ":files needs WS — :files WS [PATH]"},
		{line: "ws a b", err: ":ws takes one argument — :ws NAME"},
		{line: "shells now", err: ":shells takes no arguments — :shells"},
		{line: "foo bar", err: "unknown command: foo — :help lists them"},
		{line: "  ", err: palette.ErrEmpty.Error()},
	} {
		c, args, err := palette.Parse(tc.line)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.line)
			continue
		}
		require.NoError(t, err, tc.line)
		require.Equal(t, tc.cmd, c.Name, tc.line)
		require.Equal(t, tc.args, args, tc.line)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	var got []string
	for _, c := range palette.Commands() {
		got = append(got, c.Usage())
	}
	require.Equal(t, []string{"ws NAME", "art WS/NAME", "files WS [PATH]", "audit [WS]", "shells", "transfers",
		"ctx NAME", "sweep [WS]", "help", "q"}, got)
}

func TestCommandCompletesAndRuns(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "tr")
	sel, ok := m.Selected()
	require.True(t, ok)
	require.Equal(t, "transfers", sel)
	modeltest.Press(m.Update, "tab")
	require.Equal(t, "transfers", m.Value(), "no space: transfers takes no argument")
	modeltest.Press(m.Update, "enter")
	name, args := ran(t, m)
	require.Equal(t, "transfers", name)
	require.Empty(t, args)
}

func TestTabAddsSpaceBeforeArguments(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "w")
	modeltest.Press(m.Update, "tab")
	require.Equal(t, "ws ", m.Value())
	v := m.View()
	require.Contains(t, v, "▸ ws-alpha")
	require.Contains(t, v, "workspace")
	require.Contains(t, v, ":ws NAME — open a workspace's artifacts")
}

func TestArgumentCompletes(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "art betrep")
	sel, _ := m.Selected()
	require.Equal(t, "ws-beta/report_csv", sel)
	modeltest.Press(m.Update, "tab")
	require.Equal(t, "art ws-beta/report_csv", m.Value(), "the last argument: no space after")
	modeltest.Press(m.Update, "enter")
	name, args := ran(t, m)
	require.Equal(t, "art", name)
	require.Equal(t, []string{"ws-beta/report_csv"}, args)
}

func TestSelectionMoves(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "ws ws-")
	sel := func() string {
		s, ok := m.Selected()
		require.True(t, ok)
		return s
	}
	first := sel()
	modeltest.Press(m.Update, "down")
	second := sel()
	modeltest.Press(m.Update, "down")
	third := sel()
	require.Len(t, map[string]bool{first: true, second: true, third: true}, 3)
	modeltest.Press(m.Update, "down", "up") // down stops at the last row
	require.Equal(t, second, sel())
	modeltest.Press(m.Update, "ctrl+n")
	require.Equal(t, third, sel())
	modeltest.Press(m.Update, "ctrl+p", "ctrl+p", "ctrl+p") // up stops at the first
	require.Equal(t, first, sel())
	require.Contains(t, m.View(), "▸ "+first)
}

func TestEnterCompletesTheSelection(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "ws alpn")
	modeltest.Press(m.Update, "enter")
	name, args := ran(t, m)
	require.Equal(t, "ws", name)
	require.Equal(t, []string{"ws-alpine"}, args)
}

func TestEnterRunsAnExactLine(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "ws ws-alp")
	modeltest.Press(m.Update, "down") // ws-alpine selected, but the line is not exact yet
	modeltest.Press(m.Update, "backspace", "backspace", "backspace", "b", "e", "t", "a")
	modeltest.Press(m.Update, "enter")
	_, args := ran(t, m)
	require.Equal(t, []string{"ws-beta"}, args)
}

func TestEnterOnAnOptionalArgumentRunsWithout(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "sweep ")
	modeltest.Press(m.Update, "enter")
	name, args := ran(t, m)
	require.Equal(t, "sweep", name)
	require.Empty(t, args)
}

func TestEnterOnAnIncompleteLineOnlyCompletes(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "ws")
	modeltest.Press(m.Update, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Equal(t, "ws ", m.Value())
	require.NotContains(t, m.View(), "needs")
}

func TestUnknownNameRunsForTheRootToRefuse(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "ws zzz")
	require.Contains(t, m.View(), "nothing matches")
	modeltest.Press(m.Update, "enter")
	_, args := ran(t, m)
	require.Equal(t, []string{"zzz"}, args)
}

func TestUnknownCommandStaysOpen(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "foo")
	modeltest.Press(m.Update, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Contains(t, m.View(), "unknown command: foo — :help lists them")
	modeltest.Press(m.Update, "backspace")
	require.NotContains(t, m.View(), "unknown command")
}

func TestMissingArgumentWithoutCandidatesSaysSo(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, nil)
	modeltest.Type(m.Update, "ctx ")
	modeltest.Press(m.Update, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Contains(t, m.View(), ":ctx needs NAME — :ctx NAME")
}

func TestEscCancels(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(0)
	m := setup(t, h, newFleet().source)
	modeltest.Type(m.Update, "ws ws-alpha")
	modeltest.Press(m.Update, "esc")
	r, done := m.Result()
	require.True(t, done)
	require.False(t, r.OK)
	_, _, ok := palette.Invocation(r)
	require.False(t, ok)
	require.Zero(t, h.Len(), "a cancelled line is not history")
}

func TestSourceAskedOncePerArgument(t *testing.T) {
	t.Parallel()
	f := newFleet()
	m := setup(t, nil, f.source)
	modeltest.Type(m.Update, "ws alp")
	modeltest.Press(m.Update, "backspace", "backspace", "backspace", "backspace")
	modeltest.Type(m.Update, "beta")
	modeltest.Press(m.Update, "enter")
	require.Equal(t, map[string]int{"ws/0": 1}, f.calls)
}

func TestRestArgumentKeepsSpaces(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	modeltest.Type(m.Update, "files ws-b")
	modeltest.Press(m.Update, "tab")
	require.Equal(t, "files ws-beta ", m.Value(), "PATH may follow")
	modeltest.Type(m.Update, "my dir/a b")
	modeltest.Press(m.Update, "enter")
	name, args := ran(t, m)
	require.Equal(t, "files", name)
	require.Equal(t, []string{"ws-beta", "my dir/a b"}, args)
}

func TestHistoryWalk(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(0)
	for _, line := range []string{"shells", "ws ws-beta"} {
		m := setup(t, h, newFleet().source)
		modeltest.Type(m.Update, line)
		modeltest.Press(m.Update, "enter")
		ran(t, m)
	}
	require.Equal(t, []string{"shells", "ws ws-beta"}, h.Lines())

	m := setup(t, h, newFleet().source)
	modeltest.Press(m.Update, "down")
	require.Empty(t, m.Value(), "nothing newer than the empty line")
	modeltest.Press(m.Update, "up")
	require.Equal(t, "ws ws-beta", m.Value())
	require.NotContains(t, m.View(), "▸", "walking the history selects no suggestion")
	modeltest.Press(m.Update, "ctrl+p", "up")
	require.Equal(t, "shells", m.Value(), "the oldest stays")
	modeltest.Press(m.Update, "down")
	require.Equal(t, "ws ws-beta", m.Value())
	modeltest.Press(m.Update, "ctrl+n")
	require.Empty(t, m.Value())
	modeltest.Press(m.Update, "up", "enter")
	name, _ := ran(t, m)
	require.Equal(t, "ws", name)
	require.Equal(t, []string{"shells", "ws ws-beta"}, h.Lines(), "run again, it stays newest and once")
}

func TestEditingARecalledLineMovesTheSelection(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(0)
	h.Add("ws ws-a")
	m := setup(t, h, newFleet().source)
	modeltest.Press(m.Update, "up", "l")
	require.Equal(t, "ws ws-al", m.Value())
	modeltest.Press(m.Update, "down")
	require.Equal(t, "ws ws-al", m.Value(), "down moved the selection, not the history")
	sel, _ := m.Selected()
	require.Equal(t, "ws-alpine", sel)
}

func TestHistoryBoundAndDuplicates(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(3)
	for _, l := range []string{"a", "b", " c ", "a", "", "d"} {
		h.Add(l)
	}
	require.Equal(t, []string{"c", "a", "d"}, h.Lines())
	big := palette.NewHistory(0)
	for i := range 250 {
		big.Add(strings.Repeat("x", i+1))
	}
	require.Equal(t, palette.HistorySize, big.Len())
	require.Equal(t, strings.Repeat("x", 250), big.Lines()[palette.HistorySize-1])
}

func TestHostileNamesShowEscaped(t *testing.T) {
	t.Parallel()
	evil := "ws-\x1b[31mevil"
	src := func(string, int) []palette.Candidate {
		return []palette.Candidate{
			{Value: evil, Detail: "workspace \x07"},
			{Value: "ws-\u009bc1", Detail: "workspace"},
		}
	}
	m := setup(t, nil, src)
	modeltest.Type(m.Update, "ws ws-")
	v := m.View()
	for _, raw := range []string{"\x1b", "\u009b", "\x07"} {
		require.NotContains(t, v, raw)
	}
	require.Contains(t, v, "ws-^[[31mevil")
	require.Contains(t, v, "workspace ^G")
	require.Contains(t, v, `ws-\x9bc1`)
	modeltest.Type(m.Update, "e")
	modeltest.Press(m.Update, "tab")
	require.Equal(t, "ws ws-^[[31mevil", m.Value(), "the line holds the escaped text")
	modeltest.Press(m.Update, "enter")
	_, args := ran(t, m)
	require.Equal(t, []string{evil}, args, "the result holds the name itself")
}

func TestCountLineWhenMoreMatch(t *testing.T) {
	t.Parallel()
	src := func(string, int) []palette.Candidate {
		out := make([]palette.Candidate, 1500)
		for i := range out {
			out[i] = palette.Candidate{Value: "ws-" + strings.Repeat("a", i%7+1), Detail: "workspace"}
		}
		return out
	}
	m := setup(t, nil, src)
	modeltest.Type(m.Update, "ws a")
	require.Contains(t, m.View(), "10 of 1 500 — type to narrow")
}

func TestNonKeyMessagesAreIgnored(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, nil)
	md, cmd := m.Update(tea.WindowSizeMsg{Width: 1, Height: 1})
	require.Same(t, m, md)
	require.Nil(t, cmd)
	require.Contains(t, m.Hint(), "esc cancels")
}

// TestView is the palette at 60 and 120 columns: the command list, an
// argument's suggestions with the selection, and an error.
func TestView(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, typed string
		keys        []string
	}{
		{name: "empty"},
		{name: "command", typed: "s"},
		{name: "argument", typed: "art alp", keys: []string{"down"}},
		{name: "unknown", typed: "nope", keys: []string{"enter"}},
	} {
		for _, w := range []int{60, 120} {
			t.Run(tc.name+"/"+strconv.Itoa(w), func(t *testing.T) {
				th := modeltest.Theme()
				m := palette.New(th, nil, newFleet().source)
				m.SetSize(w, 24)
				modeltest.Type(m.Update, tc.typed)
				modeltest.Press(m.Update, tc.keys...)
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}
