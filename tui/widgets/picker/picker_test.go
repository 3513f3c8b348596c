package picker_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/picker"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func setup(t *testing.T, n int, check func(string) string) *picker.Model {
	t.Helper()
	th := theme.New("dark", theme.Unicode())
	th.Plain = true
	var items []picker.Item
	for i := range n {
		items = append(items, picker.Item{ID: fmt.Sprintf("id-%d", i), Name: fmt.Sprintf("art_%02d", i), Note: "1 B"})
	}
	m := picker.New(th, "Pick", "Choose one.", items, check)
	m.SetSize(100, 20)
	return m
}

func key(s string) tea.KeyMsg {
	switch s {
	case "enter":
		return tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "end":
		return tea.KeyMsg{Type: tea.KeyEnd}
	case "backspace":
		return tea.KeyMsg{Type: tea.KeyBackspace}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

func press(m *picker.Model, keys ...string) {
	for _, k := range keys {
		m.Update(key(k))
	}
}

func TestPicks(t *testing.T) {
	t.Parallel()
	m := setup(t, 3, nil)
	press(m, "down", "down", "down", "up", "enter")
	r, done := m.Result()
	require.True(t, done)
	require.True(t, r.OK)
	require.Equal(t, "id-1", r.Values["id"])
}

func TestTypingFilters(t *testing.T) {
	t.Parallel()
	m := setup(t, 30, nil)
	press(m, "q", "j", "k") // letters are text here, never keys
	require.Contains(t, m.View(), "nothing matches")
	press(m, "backspace", "backspace", "backspace", "2", "7")
	require.Contains(t, m.View(), "▸ art_27")
	require.NotContains(t, m.View(), "art_26")
	press(m, "enter")
	r, _ := m.Result()
	require.Equal(t, "id-27", r.Values["id"])
}

func TestWindowScrolls(t *testing.T) {
	t.Parallel()
	m := setup(t, 30, nil) // 20 rows leave 9 for items
	require.Contains(t, m.View(), "1 of 30")
	press(m, "end")
	v := m.View()
	require.Contains(t, v, "▸ art_29")
	require.NotContains(t, v, "art_00")
	require.Contains(t, v, "30 of 30")
}

func TestRefusalKeepsItOpen(t *testing.T) {
	t.Parallel()
	m := setup(t, 2, func(id string) string {
		if id == "id-0" {
			return "art_00 is not an archive"
		}
		return ""
	})
	press(m, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Contains(t, m.View(), "art_00 is not an archive")
	m.SetSize(80, 20)
	require.Contains(t, m.View(), "art_00 is not an archive", "a resize keeps the sentence")
	press(m, "down")
	require.NotContains(t, m.View(), "not an archive", "moving on clears it")
	press(m, "enter")
	r, done := m.Result()
	require.True(t, done && r.OK)
	require.Equal(t, "id-1", r.Values["id"])
}

func TestEscCancels(t *testing.T) {
	t.Parallel()
	m := setup(t, 2, nil)
	press(m, "esc")
	r, done := m.Result()
	require.True(t, done)
	require.False(t, r.OK)
	require.True(t, strings.HasPrefix(m.Hint(), "type to filter"))
}
