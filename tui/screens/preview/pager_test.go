package preview_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/preview"
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
	th := modeltest.Theme()
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
		modeltest.Msg(modeltest.Press(s.Update, "j"))
		modeltest.Msg(modeltest.Press(s.Update, "down"))
		require.Equal(t, "line 02", top(s))
		modeltest.Msg(modeltest.Press(s.Update, "pgdown"))
		require.Equal(t, "line 12", top(s))
		modeltest.Msg(modeltest.Press(s.Update, "ctrl+d"))
		require.Equal(t, "line 17", top(s))
		modeltest.Msg(modeltest.Press(s.Update, "G"))
		require.Equal(t, "line 90", top(s), "the last full window")
		modeltest.Msg(modeltest.Press(s.Update, "g"))
		require.Equal(t, "line 00", top(s))
	})
	t.Run("ViewportDefaultsUnbound", func(t *testing.T) {
		t.Parallel()
		s := setup(t, nil)
		for _, k := range []string{"u", "f", "b", " ", "l"} {
			modeltest.Msg(modeltest.Press(s.Update, k))
			require.Equal(t, "line 00", top(s), "%q pages nowhere", k)
		}
		require.Equal(t, screen.ActionMsg{ID: keys.ArtDownload, WorkspaceID: "w1", ArtifactID: "a1"}, modeltest.Msg(modeltest.Press(s.Update, "d")), "d downloads")
		require.Equal(t, "line 00", top(s))
		require.Equal(t, screen.NavMsg{Kind: screen.NavPop}, modeltest.Msg(modeltest.Press(s.Update, "h")), "h goes back")
	})
	t.Run("RemappedKeyScrolls", func(t *testing.T) {
		t.Parallel()
		s := setup(t, map[string][]string{"down": {"J"}})
		modeltest.Msg(modeltest.Press(s.Update, "j"))
		require.Equal(t, "line 00", top(s), "j is no longer down")
		modeltest.Msg(modeltest.Press(s.Update, "J"))
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
	modeltest.Msg(modeltest.Press(s.Update, "/"))
	require.True(t, s.Capturing())
	for _, k := range []string{"q", "j", "d"} {
		require.Nil(t, modeltest.Msg(modeltest.Press(s.Update, k)), "%q is text in the search field", k)
	}
	require.Equal(t, "/qjd_", top(s), "the query with its cursor")
	modeltest.Msg(modeltest.Press(s.Update, "esc"))
	require.False(t, s.Capturing())
	require.Equal(t, "line 00", top(s), "esc clears the search")
	modeltest.Msg(modeltest.Press(s.Update, "/"))
	modeltest.Msg(modeltest.Press(s.Update, "5"))
	modeltest.Msg(modeltest.Press(s.Update, "0"))
	modeltest.Msg(modeltest.Press(s.Update, "enter"))
	require.False(t, s.Capturing())
	require.Contains(t, s.View(), "hit 1 of 1")
	require.Equal(t, "preview /50 1 hit", s.Crumbs()[1])
}
