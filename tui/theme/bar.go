package theme

import (
	"unicode/utf8"

	"github.com/charmbracelet/bubbles/progress"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
)

// Bar returns a bubbles progress bar width cells wide in the theme's
// glyphs (█░, or #. in ascii) and colours, without its percentage (callers
// print their own, rounded down, so 100 % means done). Draw it with ViewAs
// only: SetPercent starts the spring animation, and a transfer bar is a
// static render of the last sample.
func (t *Theme) Bar(width int) progress.Model {
	full, _ := utf8.DecodeRuneInString(t.Glyphs.BarFull)
	empty, _ := utf8.DecodeRuneInString(t.Glyphs.BarEmpty)
	profile := t.render().ColorProfile()
	if t.Plain {
		profile = termenv.Ascii
	}
	bar := progress.New(progress.WithWidth(max(0, width)), progress.WithoutPercentage(),
		progress.WithFillCharacters(full, empty), progress.WithColorProfile(profile))
	if profile == termenv.Ascii {
		// Resolving an adaptive colour may ask the terminal for its
		// background; without colour there is nothing to ask for.
		return bar
	}
	bar.FullColor, bar.EmptyColor = t.color(t.barFull), t.color(t.barEmpty)
	return bar
}

// color is the one colour of a light/dark pair this theme draws with.
func (t *Theme) color(c lipgloss.AdaptiveColor) string {
	switch t.kind {
	case "dark":
		return c.Dark
	case "light":
		return c.Light
	}
	if t.render().HasDarkBackground() {
		return c.Dark
	}
	return c.Light
}

// render is the renderer the theme was built on (a zero Theme has none).
func (t *Theme) render() *lipgloss.Renderer {
	if t.renderer == nil {
		return lipgloss.DefaultRenderer()
	}
	return t.renderer
}
