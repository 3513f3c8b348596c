package preview_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/theme"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// setup is a preview of 100 numbered lines in a 60×10 body, loaded.
func setup(t *testing.T, overrides map[string][]string) *preview.Screen {
	t.Helper()
	km, _, err := keys.New(overrides)
	require.NoError(t, err)
	th := theme.New("dark", theme.Unicode())
	th.Plain = true
	a := &cairn.Artifact{ID: "a1", WorkspaceID: "w1", Name: "notes_txt", MIMEType: "text/plain", UpdatedAt: time.Unix(1, 0)}
	s := preview.New(&deps.Deps{Theme: th, Keys: km}, a, 1, true)
	s.SetSize(60, 10)
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "line %02d\n", i)
	}
	s.Update(preview.Msg{ArtifactID: a.ID, UpdatedAt: a.UpdatedAt, Req: 1, Data: []byte(b.String()), Total: int64(b.Len())})
	return s
}

func press(t *testing.T, s *preview.Screen, k string) tea.Msg {
	t.Helper()
	var msg tea.KeyMsg
	switch k {
	case "down":
		msg = tea.KeyMsg{Type: tea.KeyDown}
	case "pgdown":
		msg = tea.KeyMsg{Type: tea.KeyPgDown}
	case "ctrl+d":
		msg = tea.KeyMsg{Type: tea.KeyCtrlD}
	case "enter":
		msg = tea.KeyMsg{Type: tea.KeyEnter}
	case "esc":
		msg = tea.KeyMsg{Type: tea.KeyEsc}
	case " ":
		msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune(" ")}
	default:
		msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
	}
	_, cmd := s.Update(msg)
	if cmd == nil {
		return nil
	}
	return cmd()
}

// top is the first line shown.
func top(s *preview.Screen) string {
	first, _, _ := strings.Cut(s.View(), "\n")
	return strings.TrimSpace(first)
}

func TestPagerKeys(t *testing.T) {
	t.Parallel()
	t.Run("Movement", func(t *testing.T) {
		t.Parallel()
		s := setup(t, nil)
		require.Equal(t, "line 00", top(s))
		press(t, s, "j")
		press(t, s, "down")
		require.Equal(t, "line 02", top(s))
		press(t, s, "pgdown")
		require.Equal(t, "line 12", top(s))
		press(t, s, "ctrl+d")
		require.Equal(t, "line 17", top(s))
		press(t, s, "G")
		require.Equal(t, "line 90", top(s), "the last full window")
		press(t, s, "g")
		require.Equal(t, "line 00", top(s))
	})
	t.Run("ViewportDefaultsUnbound", func(t *testing.T) {
		t.Parallel()
		s := setup(t, nil)
		for _, k := range []string{"u", "f", "b", " ", "l"} {
			press(t, s, k)
			require.Equal(t, "line 00", top(s), "%q pages nowhere (TUI.md §1.4)", k)
		}
		require.Equal(t, screen.ActionMsg{ID: keys.ArtDownload, WorkspaceID: "w1", ArtifactID: "a1"}, press(t, s, "d"), "d downloads")
		require.Equal(t, "line 00", top(s))
		require.Equal(t, screen.NavMsg{Kind: screen.NavPop}, press(t, s, "h"), "h goes back")
	})
	t.Run("RemappedKeyScrolls", func(t *testing.T) {
		t.Parallel()
		s := setup(t, map[string][]string{"down": {"J"}})
		press(t, s, "j")
		require.Equal(t, "line 00", top(s), "j is no longer down")
		press(t, s, "J")
		require.Equal(t, "line 01", top(s))
	})
	t.Run("WindowIsTheBody", func(t *testing.T) {
		t.Parallel()
		s := setup(t, nil)
		rows := strings.Split(s.View(), "\n")
		require.Len(t, rows, 10)
		for _, r := range rows {
			require.Equal(t, 60, lipgloss.Width(r))
		}
	})
}

func TestSearchInput(t *testing.T) {
	t.Parallel()
	s := setup(t, nil)
	press(t, s, "/")
	require.True(t, s.Capturing())
	for _, k := range []string{"q", "j", "d"} {
		require.Nil(t, press(t, s, k), "%q is text in the search field", k)
	}
	require.Equal(t, "/qjd_", top(s), "the query with its cursor")
	press(t, s, "esc")
	require.False(t, s.Capturing())
	require.Equal(t, "line 00", top(s), "esc clears the search")
	press(t, s, "/")
	press(t, s, "5")
	press(t, s, "0")
	press(t, s, "enter")
	require.False(t, s.Capturing())
	require.Contains(t, s.View(), "hit 1 of 1")
	require.Equal(t, "preview /50 1 hit", s.Crumbs()[1])
}
