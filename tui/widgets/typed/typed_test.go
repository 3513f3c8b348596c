package typed_test

import (
	"os"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func setup(t *testing.T) *typed.Model {
	t.Helper()
	th := theme.New("dark", theme.Unicode())
	th.Plain = true
	m := typed.New(th, "Delete ws-alpha", "This deletes ws-alpha.", "ws-alpha")
	m.SetSize(100, 30)
	return m
}

func typeIn(m *typed.Model, s string) {
	for _, r := range s {
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func TestTyped(t *testing.T) {
	t.Parallel()
	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		typeIn(m, "ws-alpha")
		require.Contains(t, m.View(), "> ws-alpha_")
		m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		r, done := m.Result()
		require.True(t, done)
		require.True(t, r.OK)
	})
	t.Run("MismatchStays", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		typeIn(m, "ws-alph")
		m.Update(tea.KeyMsg{Type: tea.KeyEnter})
		_, done := m.Result()
		require.False(t, done)
		require.Contains(t, m.View(), "does not match")
		typeIn(m, "a")
		require.NotContains(t, m.View(), "does not match", "an edit clears the mismatch")
	})
	t.Run("QTypes", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		typeIn(m, "q")
		_, done := m.Result()
		require.False(t, done)
		require.Contains(t, m.View(), "> q_")
	})
	t.Run("EscCancels", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		m.Update(tea.KeyMsg{Type: tea.KeyEsc})
		r, done := m.Result()
		require.True(t, done)
		require.False(t, r.OK)
	})
}
