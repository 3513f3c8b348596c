// Package footer draws the hint line from the key registry: disabled and
// hidden bindings omitted, lowest priority dropped first, "? help" always
// kept (TUI.md §1.1).
package footer

import (
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Shown returns the bindings the hint line shows at width, in their
// context order.
func Shown(th *theme.Theme, bindings []keys.State, width int) []keys.State {
	var cands []keys.State
	for _, b := range bindings {
		if b.Enabled && !b.Hidden && b.Priority > 0 && len(b.Keys) > 0 {
			cands = append(cands, b)
		}
	}
	for len(cands) > 1 && plainWidth(cands, sep(th)) > width {
		cands = dropLowest(cands)
	}
	return cands
}

func dropLowest(cands []keys.State) []keys.State {
	low := -1
	for i, b := range cands {
		if b.ID == keys.Help {
			continue
		}
		if low < 0 || b.Priority < cands[low].Priority {
			low = i
		}
	}
	if low < 0 {
		return cands
	}
	return slices.Delete(cands, low, low+1)
}

func hintText(b keys.State) string { return b.FirstKey() + " " + b.Short }

func sep(th *theme.Theme) string { return " " + th.Glyphs.Dot + " " }

func plainWidth(bs []keys.State, sep string) int {
	n := 0
	for i, b := range bs {
		if i > 0 {
			n += ansi.StringWidth(sep)
		}
		n += ansi.StringWidth(hintText(b))
	}
	return n
}

// View renders the hint line.
func View(th *theme.Theme, bindings []keys.State, width int) string {
	shown := Shown(th, bindings, width)
	parts := make([]string, len(shown))
	for i, b := range shown {
		parts[i] = th.Key.Render(b.FirstKey()) + th.Hint.Render(" "+b.Short)
	}
	line := strings.Join(parts, th.Hint.Render(sep(th)))
	if ansi.StringWidth(line) > width {
		line = ansi.Truncate(line, width, "")
	}
	return line
}
