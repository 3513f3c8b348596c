package modeltest_test

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/modeltest"
)

// A key named as the registry names it reads back as that name, as the
// models see it through KeyMsg.String.
func TestKeyRoundTrips(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"enter", "esc", "tab", "shift+tab", "up", "down", "pgdown", "home", "end", "backspace",
		"delete", "ctrl+c", "ctrl+d", "ctrl+]", " ", "j", "G", "/", "alt+x", "alt+enter"} {
		require.Equal(t, name, modeltest.Key(name).String(), name)
	}
	require.Equal(t, tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}, modeltest.Key(" "), "space carries its rune, as a terminal sends it")
}

type recorder struct{ got []string }

func (r *recorder) Update(msg tea.Msg) (*recorder, tea.Cmd) {
	k := msg.(tea.KeyMsg).String()
	r.got = append(r.got, k)
	if k == "x" {
		return r, func() tea.Msg { return "did x" }
	}
	return r, nil
}

func TestPressAndType(t *testing.T) {
	t.Parallel()
	r := &recorder{}
	require.Nil(t, modeltest.Press(r.Update, "down", "enter"), "no key returned a Cmd")
	require.Equal(t, []tea.Msg{"did x", "did x"}, modeltest.Msgs(modeltest.Type(r.Update, "a x x")))
	require.Equal(t, []string{"down", "enter", "a", " ", "x", " ", "x"}, r.got)
}

func TestMsgs(t *testing.T) {
	t.Parallel()
	one := func(m tea.Msg) tea.Cmd { return func() tea.Msg { return m } }
	cmd := tea.Batch(one(1), tea.Batch(one(2), one(nil), one(3)), one(4))
	require.Equal(t, []tea.Msg{1, 2, 3, 4}, modeltest.Msgs(cmd))
	require.Nil(t, modeltest.Msg(nil))
}

func TestPercentiles(t *testing.T) {
	t.Parallel()
	d := make([]time.Duration, 100)
	for i := range d {
		d[i] = time.Duration(100-i) * time.Millisecond
	}
	p50, p99 := modeltest.Percentiles(d)
	require.Equal(t, 51*time.Millisecond, p50)
	require.Equal(t, 100*time.Millisecond, p99)
	require.InDelta(t, 1.5, modeltest.Millis(1500*time.Microsecond), 1e-9)
}
