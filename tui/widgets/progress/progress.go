// Package progress is cairn-tui's progress bar: a pure render of a
// fraction, with no animation (bubbles' progress would pull a spring
// module this build does not carry; TUI.md §1.6 wants ViewAs-style
// static bars anyway).
package progress

import (
	"math"
	"strings"

	"github.com/cairn-dev/cairn/tui/theme"
)

// ViewAs draws a bar width cells wide, filled to fraction (clamped to
// 0–1): the full glyph in the good style, the empty one dimmed.
func ViewAs(th *theme.Theme, fraction float64, width int) string {
	if width <= 0 {
		return ""
	}
	if math.IsNaN(fraction) {
		fraction = 0
	}
	full := int(math.Round(max(0, min(1, fraction)) * float64(width)))
	return th.Good.Render(strings.Repeat(th.Glyphs.BarFull, full)) +
		th.Dim.Render(strings.Repeat(th.Glyphs.BarEmpty, width-full))
}
