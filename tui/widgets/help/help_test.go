package help_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/help"
)

func TestMain(m *testing.M) {
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

// setup is a pager over 40 numbered lines in a body of 100×20: 14 show.
func setup(t *testing.T) *help.Model {
	t.Helper()
	lines := make([]string, 40)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %02d", i)
	}
	m := help.New(theme.New("dark", theme.Unicode()), "Messages", lines)
	m.SetSize(100, 20)
	return m
}

func TestScroll(t *testing.T) {
	t.Parallel()
	t.Run("Lines", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		require.Contains(t, m.View(), "line 13")
		require.NotContains(t, m.View(), "line 14")
		m.Update(modeltest.Key("j"))
		m.Update(modeltest.Key("down"))
		require.Equal(t, 2, m.Offset())
		require.Contains(t, m.View(), "line 15")
		m.Update(modeltest.Key("k"))
		require.Equal(t, 1, m.Offset())
	})
	t.Run("Pages", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		m.Update(modeltest.Key("pgdown"))
		require.Equal(t, 14, m.Offset())
		m.Update(modeltest.Key("ctrl+d"))
		require.Equal(t, 21, m.Offset())
	})
	t.Run("EndShowsTheLastLine", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		m.Update(modeltest.Key("G"))
		require.Contains(t, m.View(), "line 39")
		m.Update(modeltest.Key("j"))
		require.Equal(t, 26, m.Offset(), "no scrolling past the end")
		m.Update(modeltest.Key("g"))
		require.Equal(t, 0, m.Offset())
	})
	t.Run("ViewportDefaultsUnbound", func(t *testing.T) {
		t.Parallel()
		m := setup(t)
		for _, k := range []string{"d", "u", "f", "b", " ", "l", "h"} {
			m.Update(modeltest.Key(k))
			require.Equal(t, 0, m.Offset(), "%q pages nowhere", k)
		}
	})
	t.Run("ShortListShortBox", func(t *testing.T) {
		t.Parallel()
		m := help.New(theme.New("dark", theme.Unicode()), "Messages", []string{"no messages yet"})
		m.SetSize(100, 20)
		require.Len(t, strings.Split(m.View(), "\n"), 5, "border, title, blank, the line, border")
	})
}

func TestClose(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"?", "!", "q", "esc"} {
		t.Run(k, func(t *testing.T) {
			t.Parallel()
			m := setup(t)
			m.Update(modeltest.Key(k))
			_, done := m.Result()
			require.True(t, done)
		})
	}
}

func TestLines(t *testing.T) {
	t.Parallel()
	km, _, err := keys.New(nil)
	require.NoError(t, err)
	ctx := keys.Context{Bindings: km.Enabled(keys.ScopeLists)}
	ctx.Disable(keys.Shell, "shell needs volume READY — v provisions it")
	for i := range ctx.Bindings {
		if ctx.Bindings[i].ID == keys.VolSave {
			ctx.Bindings[i].Hidden = true // as read-only mode hides it
		}
	}
	lines := help.Lines(theme.New("dark", theme.Unicode()), []help.Group{{Title: "This screen", Bindings: ctx.Bindings}})
	require.Equal(t, []string{
		"This screen",
		"space         mark the row (bulk actions act on the marks; esc clears them)",
		"ctrl+a        mark every visible (filtered) row",
		"s             open a shell in the workspace (volume at /mnt/cairn/ws) — shell needs volume READY — v provisions it",
		"f             browse the workspace volume's files (needs volume READY)",
		"w             the workspace's live shells (:shells lists every one)",
		"a             the workspace's audit trail (:audit lists every one; admin scope)",
		"P             the workspace's snapshots: take, restore, fork, delete",
		"S             sweep the workspace now: flag objects gone from the store (admin scope)",
	}, lines)
}

// TestLogWrapsLongLines: the messages log shows a sentence longer than
// its box whole, wrapped under a hanging indent; the help pager cuts.
func TestLogWrapsLongLines(t *testing.T) {
	t.Parallel()
	th := modeltest.Theme()
	long := "20:14:07 ✕ error: cannot reach the object store at 127.0.0.1:38537 — the server's artifact.s3.presignEndpoint must be reachable from clients"
	log := help.NewLog(th, "Messages", []string{long})
	log.SetSize(80, 20)
	v := log.View()
	require.Contains(t, strings.Join(strings.Fields(strings.ReplaceAll(v, "│", " ")), " "), "must be reachable from clients")
	require.Contains(t, v, "\n│          ", "the continuation hangs under the time")
	pager := help.New(th, "Help", []string{long})
	pager.SetSize(80, 20)
	require.NotContains(t, pager.View(), "from clients", "the help pager cuts its long lines")
}
