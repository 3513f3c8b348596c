package bulkresult_test

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/bulkresult"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// sentence stands in for the root's error → sentence.
func sentence(err error) string {
	var e *cairn.Error
	if errors.As(err, &e) {
		return "refused: " + string(e.Reason)
	}
	return err.Error()
}

// rows is n results named report_NNNN; those at fail are refused.
func rows(n int, fail ...int) []bulkresult.Row {
	out := make([]bulkresult.Row, n)
	for i := range out {
		out[i].Name = fmt.Sprintf("report_%04d", i)
	}
	for _, i := range fail {
		out[i].Err = &cairn.Error{Reason: cairn.ReasonArtifactNotFound, Status: 404}
	}
	return out
}

func setup(t *testing.T, g theme.Glyphs, rs []bulkresult.Row, w, h int) *bulkresult.Model {
	t.Helper()
	m := bulkresult.New(theme.New("dark", g), "Deleted artifacts", "deleted", rs, sentence)
	m.SetSize(w, h)
	return m
}

// body is the view's lines inside the border, trimmed.
func body(v string) []string {
	var out []string
	for _, l := range strings.Split(v, "\n") {
		l = strings.Trim(l, "│╭╮╰╯─ ")
		out = append(out, l)
	}
	return out
}

func TestSummaryAndRefusedFirst(t *testing.T) {
	t.Parallel()
	m := setup(t, theme.Unicode(), rows(1000, 7, 500, 999), 120, 30)
	ok, refused := m.Counts()
	require.Equal(t, 997, ok)
	require.Equal(t, 3, refused)
	require.Equal(t, "✓ 997 deleted · ✕ 3 refused", m.Summary())
	lines := body(m.View())
	require.Equal(t, "✓ 997 deleted · ✕ 3 refused", lines[3])
	require.Equal(t, []string{
		"✕ report_0007 — refused: artifact_not_found",
		"✕ report_0500 — refused: artifact_not_found",
		"✕ report_0999 — refused: artifact_not_found",
		"✓ report_0000",
	}, lines[5:9])
	require.Contains(t, m.View(), "lines 1–22 of 1 000 · j/k scroll")
}

func TestScrolls(t *testing.T) {
	t.Parallel()
	m := setup(t, theme.Unicode(), rows(1000, 7, 500, 999), 120, 30) // 22 rows show
	modeltest.Press(m.Update, "j", "j", "k")
	require.Equal(t, 1, m.Offset())
	modeltest.Press(m.Update, "pgdown")
	require.Equal(t, 23, m.Offset())
	modeltest.Press(m.Update, "pgup", "down")
	require.Equal(t, 2, m.Offset())
	modeltest.Press(m.Update, "G")
	require.Equal(t, 1000-22, m.Offset())
	require.Contains(t, m.View(), "✓ report_0998")
	require.NotContains(t, m.View(), "report_0999", "refused rows are at the top")
	modeltest.Press(m.Update, "g")
	require.Zero(t, m.Offset())
	modeltest.Press(m.Update, "l", "d", "space") // no sideways, no d/u/space paging
	require.Zero(t, m.Offset())
	_, done := m.Result()
	require.False(t, done)
}

func TestCloses(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"esc", "q", "enter"} {
		m := setup(t, theme.Unicode(), rows(3, 1), 100, 20)
		modeltest.Press(m.Update, k)
		r, done := m.Result()
		require.True(t, done, k)
		require.False(t, r.OK)
		md, cmd := m.Update(tea.WindowSizeMsg{})
		require.Same(t, m, md)
		require.Nil(t, cmd)
	}
}

func TestAllOneWay(t *testing.T) {
	t.Parallel()
	require.Equal(t, "✓ 5 deleted", setup(t, theme.Unicode(), rows(5), 100, 20).Summary())
	require.Equal(t, "✕ 2 refused", setup(t, theme.Unicode(), rows(2, 0, 1), 100, 20).Summary())
	require.Equal(t, "✓ 0 deleted", setup(t, theme.Unicode(), nil, 100, 20).Summary())
	require.Equal(t, "+ 1 deleted | x 1 refused", setup(t, theme.ASCII(), rows(2, 1), 100, 20).Summary(),
		"the ascii glyphs")
}

func TestHostileTextIsEscaped(t *testing.T) {
	t.Parallel()
	rs := []bulkresult.Row{
		{Name: "evil\x1b]52;c;aGk=\x07", Err: errors.New("server said \u009b2J")},
		{Name: "ok\x1b[2J"},
	}
	m := bulkresult.New(theme.New("dark", theme.Unicode()), "Deleted", "deleted", rs, func(err error) string { return err.Error() })
	m.SetSize(100, 20)
	v := m.View()
	for _, raw := range []string{"\x1b", "\x07", "\u009b"} {
		require.NotContains(t, v, raw)
	}
	require.Contains(t, v, `✕ evil^[]52;c;aGk=^G — server said \x9b2J`)
	require.Contains(t, v, "✓ ok^[[2J")
}

func TestLongSentenceWraps(t *testing.T) {
	t.Parallel()
	rs := []bulkresult.Row{{Name: "ws-alpha", Err: errors.New(strings.Repeat("volume is mounted by running containers ", 3))}}
	m := bulkresult.New(theme.New("dark", theme.Unicode()), "Torn down", "torn down", rs, func(err error) string { return err.Error() })
	m.SetSize(60, 20)
	lines := body(m.View())
	require.True(t, strings.HasPrefix(lines[5], "✕ ws-alpha — volume is mounted"), lines[5])
	require.Greater(t, len(lines), 8, "the sentence goes on under the row")
	require.Contains(t, m.View(), "│   ", "under a hanging indent")
}

func TestRowsFromBulk(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	got := bulkresult.Rows([]ops.DoneMsg{
		{Op: ops.Op{Kind: ops.DeleteArtifact, ArtName: "a1", WSName: "ws"}},
		{Op: ops.Op{Kind: ops.Teardown, WSName: "ws-b"}, Err: boom},
	})
	require.Equal(t, []bulkresult.Row{{Name: "a1"}, {Name: "ws-b", Err: boom}}, got)
}

// TestView is the modal at 60 and 120 columns: a short list, and a long
// one scrolled.
func TestView(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rows []bulkresult.Row
		keys []string
	}{
		{name: "short", rows: rows(6, 2, 4)},
		{name: "scrolled", rows: rows(40, 3), keys: []string{"pgdown", "j"}},
	} {
		for _, w := range []int{60, 120} {
			t.Run(tc.name+"/"+strconv.Itoa(w), func(t *testing.T) {
				m := setup(t, theme.Unicode(), tc.rows, w, 20)
				modeltest.Press(m.Update, tc.keys...)
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}
