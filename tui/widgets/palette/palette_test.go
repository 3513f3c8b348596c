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

	"github.com/cairn-dev/cairn/tui/theme"
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
	th := theme.New("dark", theme.Unicode())
	th.Plain = true
	m := palette.New(th, h, src)
	m.SetSize(120, 30)
	return m
}

func key(s string) tea.KeyMsg {
	types := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "tab": tea.KeyTab, "up": tea.KeyUp, "down": tea.KeyDown,
		"ctrl+p": tea.KeyCtrlP, "ctrl+n": tea.KeyCtrlN, "backspace": tea.KeyBackspace,
	}
	if t, ok := types[s]; ok {
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// typeText sends each rune of s as its own key, as a terminal does.
func typeText(m *palette.Model, s string) {
	for _, r := range s {
		m.Update(key(string(r)))
	}
}

func press(m *palette.Model, keys ...string) {
	for _, k := range keys {
		m.Update(key(k))
	}
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
	typeText(m, "tr")
	sel, ok := m.Selected()
	require.True(t, ok)
	require.Equal(t, "transfers", sel)
	press(m, "tab")
	require.Equal(t, "transfers", m.Value(), "no space: transfers takes no argument")
	press(m, "enter")
	name, args := ran(t, m)
	require.Equal(t, "transfers", name)
	require.Empty(t, args)
}

func TestTabAddsSpaceBeforeArguments(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "w")
	press(m, "tab")
	require.Equal(t, "ws ", m.Value())
	v := m.View()
	require.Contains(t, v, "▸ ws-alpha")
	require.Contains(t, v, "workspace")
	require.Contains(t, v, ":ws NAME — open a workspace's artifacts")
}

func TestArgumentCompletes(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "art betrep")
	sel, _ := m.Selected()
	require.Equal(t, "ws-beta/report_csv", sel)
	press(m, "tab")
	require.Equal(t, "art ws-beta/report_csv", m.Value(), "the last argument: no space after")
	press(m, "enter")
	name, args := ran(t, m)
	require.Equal(t, "art", name)
	require.Equal(t, []string{"ws-beta/report_csv"}, args)
}

func TestSelectionMoves(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "ws ws-")
	sel := func() string {
		s, ok := m.Selected()
		require.True(t, ok)
		return s
	}
	first := sel()
	press(m, "down")
	second := sel()
	press(m, "down")
	third := sel()
	require.Len(t, map[string]bool{first: true, second: true, third: true}, 3)
	press(m, "down", "up") // down stops at the last row
	require.Equal(t, second, sel())
	press(m, "ctrl+n")
	require.Equal(t, third, sel())
	press(m, "ctrl+p", "ctrl+p", "ctrl+p") // up stops at the first
	require.Equal(t, first, sel())
	require.Contains(t, m.View(), "▸ "+first)
}

func TestEnterCompletesTheSelection(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "ws alpn")
	press(m, "enter")
	name, args := ran(t, m)
	require.Equal(t, "ws", name)
	require.Equal(t, []string{"ws-alpine"}, args)
}

func TestEnterRunsAnExactLine(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "ws ws-alp")
	press(m, "down") // ws-alpine selected, but the line is not exact yet
	press(m, "backspace", "backspace", "backspace", "b", "e", "t", "a")
	press(m, "enter")
	_, args := ran(t, m)
	require.Equal(t, []string{"ws-beta"}, args)
}

func TestEnterOnAnOptionalArgumentRunsWithout(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "sweep ")
	press(m, "enter")
	name, args := ran(t, m)
	require.Equal(t, "sweep", name)
	require.Empty(t, args)
}

func TestEnterOnAnIncompleteLineOnlyCompletes(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "ws")
	press(m, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Equal(t, "ws ", m.Value())
	require.NotContains(t, m.View(), "needs")
}

func TestUnknownNameRunsForTheRootToRefuse(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "ws zzz")
	require.Contains(t, m.View(), "nothing matches")
	press(m, "enter")
	_, args := ran(t, m)
	require.Equal(t, []string{"zzz"}, args)
}

func TestUnknownCommandStaysOpen(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "foo")
	press(m, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Contains(t, m.View(), "unknown command: foo — :help lists them")
	press(m, "backspace")
	require.NotContains(t, m.View(), "unknown command")
}

func TestMissingArgumentWithoutCandidatesSaysSo(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, nil)
	typeText(m, "ctx ")
	press(m, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Contains(t, m.View(), ":ctx needs NAME — :ctx NAME")
}

func TestEscCancels(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(0)
	m := setup(t, h, newFleet().source)
	typeText(m, "ws ws-alpha")
	press(m, "esc")
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
	typeText(m, "ws alp")
	press(m, "backspace", "backspace", "backspace", "backspace")
	typeText(m, "beta")
	press(m, "enter")
	require.Equal(t, map[string]int{"ws/0": 1}, f.calls)
}

func TestRestArgumentKeepsSpaces(t *testing.T) {
	t.Parallel()
	m := setup(t, nil, newFleet().source)
	typeText(m, "files ws-b")
	press(m, "tab")
	require.Equal(t, "files ws-beta ", m.Value(), "PATH may follow")
	typeText(m, "my dir/a b")
	press(m, "enter")
	name, args := ran(t, m)
	require.Equal(t, "files", name)
	require.Equal(t, []string{"ws-beta", "my dir/a b"}, args)
}

func TestHistoryWalk(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(0)
	for _, line := range []string{"shells", "ws ws-beta"} {
		m := setup(t, h, newFleet().source)
		typeText(m, line)
		press(m, "enter")
		ran(t, m)
	}
	require.Equal(t, []string{"shells", "ws ws-beta"}, h.Lines())

	m := setup(t, h, newFleet().source)
	press(m, "down")
	require.Empty(t, m.Value(), "nothing newer than the empty line")
	press(m, "up")
	require.Equal(t, "ws ws-beta", m.Value())
	require.NotContains(t, m.View(), "▸", "walking the history selects no suggestion")
	press(m, "ctrl+p", "up")
	require.Equal(t, "shells", m.Value(), "the oldest stays")
	press(m, "down")
	require.Equal(t, "ws ws-beta", m.Value())
	press(m, "ctrl+n")
	require.Empty(t, m.Value())
	press(m, "up", "enter")
	name, _ := ran(t, m)
	require.Equal(t, "ws", name)
	require.Equal(t, []string{"shells", "ws ws-beta"}, h.Lines(), "run again, it stays newest and once")
}

func TestEditingARecalledLineMovesTheSelection(t *testing.T) {
	t.Parallel()
	h := palette.NewHistory(0)
	h.Add("ws ws-a")
	m := setup(t, h, newFleet().source)
	press(m, "up", "l")
	require.Equal(t, "ws ws-al", m.Value())
	press(m, "down")
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
	typeText(m, "ws ws-")
	v := m.View()
	for _, raw := range []string{"\x1b", "\u009b", "\x07"} {
		require.NotContains(t, v, raw)
	}
	require.Contains(t, v, "ws-^[[31mevil")
	require.Contains(t, v, "workspace ^G")
	require.Contains(t, v, `ws-\x9bc1`)
	typeText(m, "e")
	press(m, "tab")
	require.Equal(t, "ws ws-^[[31mevil", m.Value(), "the line holds the escaped text")
	press(m, "enter")
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
	typeText(m, "ws a")
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
				th := theme.New("dark", theme.Unicode())
				th.Plain = true
				m := palette.New(th, nil, newFleet().source)
				m.SetSize(w, 24)
				typeText(m, tc.typed)
				press(m, tc.keys...)
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}
