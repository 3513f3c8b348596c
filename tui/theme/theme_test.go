package theme_test

import (
	"io"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/theme"
)

func renderer(p termenv.Profile) *lipgloss.Renderer {
	r := lipgloss.NewRenderer(io.Discard)
	r.SetColorProfile(p)
	r.SetHasDarkBackground(true)
	return r
}

func TestBar(t *testing.T) {
	t.Parallel()
	t.Run("Glyphs", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, "███░░░░░", theme.NewFor(renderer(termenv.Ascii), "dark", theme.Unicode()).Bar(8).ViewAs(0.4))
		require.Equal(t, "###.....", theme.NewFor(renderer(termenv.Ascii), "dark", theme.ASCII()).Bar(8).ViewAs(0.4))
	})
	t.Run("Static", func(t *testing.T) {
		t.Parallel()
		bar := theme.NewFor(renderer(termenv.Ascii), "dark", theme.Unicode()).Bar(4)
		require.False(t, bar.IsAnimating(), "drawn with ViewAs, never SetPercent: no spring frames")
	})
	t.Run("ColourFromThePalette", func(t *testing.T) {
		t.Parallel()
		out := theme.NewFor(renderer(termenv.ANSI256), "dark", theme.Unicode()).Bar(2).ViewAs(0.5)
		require.Equal(t, "\x1b[38;5;39m█\x1b[0m\x1b[38;5;243m░\x1b[0m", out, "good fill, dim rest")
		out = theme.NewFor(renderer(termenv.ANSI256), "light", theme.Unicode()).Bar(2).ViewAs(0.5)
		require.Equal(t, "\x1b[38;5;25m█\x1b[0m\x1b[38;5;244m░\x1b[0m", out)
	})
	t.Run("PlainHasNoColour", func(t *testing.T) {
		t.Parallel()
		th := theme.NewFor(renderer(termenv.TrueColor), "dark", theme.Unicode())
		th.Plain = true
		out := th.Bar(4).ViewAs(0.5)
		require.Equal(t, "██░░", out)
		require.False(t, strings.Contains(out, "\x1b"))
	})
}

func TestSpinnerFrames(t *testing.T) {
	t.Parallel()
	uni, ascii := theme.Unicode(), theme.ASCII()
	require.Equal(t, "⠋", uni.Frame(0), "tests pin frame 0")
	require.Equal(t, "⠙", uni.Frame(1))
	require.Equal(t, "⠋", uni.Frame(10), "ten frames, then round again")
	require.Equal(t, "|", ascii.Frame(0))
	require.Equal(t, `\`, ascii.Frame(3))
	require.Equal(t, "/", ascii.Frame(-1), "a clock behind the start still draws")
}
