package picker_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/widgets/picker"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

func setup(t *testing.T, n int, check func(string) string) *picker.Model {
	t.Helper()
	th := modeltest.Theme()
	var items []picker.Item
	for i := range n {
		items = append(items, picker.Item{ID: fmt.Sprintf("id-%d", i), Name: fmt.Sprintf("art_%02d", i), Note: "1 B"})
	}
	m := picker.New(th, "Pick", "Choose one.", items, check)
	m.SetSize(100, 20)
	return m
}

func TestPicks(t *testing.T) {
	t.Parallel()
	m := setup(t, 3, nil)
	modeltest.Press(m.Update, "down", "down", "down", "up", "enter")
	r, done := m.Result()
	require.True(t, done)
	require.True(t, r.OK)
	require.Equal(t, "id-1", r.Values["id"])
}

func TestTypingFilters(t *testing.T) {
	t.Parallel()
	m := setup(t, 30, nil)
	modeltest.Press(m.Update, "q", "j", "k") // letters are text here, never keys
	require.Contains(t, m.View(), "nothing matches")
	modeltest.Press(m.Update, "backspace", "backspace", "backspace", "2", "7")
	require.Contains(t, m.View(), "▸ art_27")
	require.NotContains(t, m.View(), "art_26")
	modeltest.Press(m.Update, "enter")
	r, _ := m.Result()
	require.Equal(t, "id-27", r.Values["id"])
}

func TestWindowScrolls(t *testing.T) {
	t.Parallel()
	m := setup(t, 30, nil) // 20 rows leave 9 for items
	require.Contains(t, m.View(), "1 of 30")
	modeltest.Press(m.Update, "end")
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
	modeltest.Press(m.Update, "enter")
	_, done := m.Result()
	require.False(t, done)
	require.Contains(t, m.View(), "art_00 is not an archive")
	m.SetSize(80, 20)
	require.Contains(t, m.View(), "art_00 is not an archive", "a resize keeps the sentence")
	modeltest.Press(m.Update, "down")
	require.NotContains(t, m.View(), "not an archive", "moving on clears it")
	modeltest.Press(m.Update, "enter")
	r, done := m.Result()
	require.True(t, done && r.OK)
	require.Equal(t, "id-1", r.Values["id"])
}

func TestEscCancels(t *testing.T) {
	t.Parallel()
	m := setup(t, 2, nil)
	modeltest.Press(m.Update, "esc")
	r, done := m.Result()
	require.True(t, done)
	require.False(t, r.OK)
	require.True(t, strings.HasPrefix(m.Hint(), "type to filter"))
}
