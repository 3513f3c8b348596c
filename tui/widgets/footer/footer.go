// Package footer draws the hint line from the key registry with bubbles'
// help.Model: disabled and hidden bindings omitted, lowest priority dropped
// first, "? help" always kept. bubbles' ShortHelpView cuts from the end
// when the line is short; cairn chooses what goes by priority first, so the
// bindings it hands over always fit.
package footer

import (
	"slices"

	"github.com/charmbracelet/bubbles/help"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Shown returns the bindings the hint line shows at width, in their
// context order.
func Shown(th *theme.Theme, bindings []keys.State, width int) []keys.State {
	var cands []keys.State
	for _, b := range bindings {
		if b.Binding().Enabled() && b.Priority > 0 {
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

func sep(th *theme.Theme) string { return " " + th.Glyphs.Dot + " " }

func plainWidth(bs []keys.State, sep string) int {
	n := 0
	for i, b := range bs {
		if i > 0 {
			n += ansi.StringWidth(sep)
		}
		h := b.Binding().Help()
		n += ansi.StringWidth(h.Key + " " + h.Desc)
	}
	return n
}

// Model is bubbles' help.Model in the theme's styles and separator.
func Model(th *theme.Theme, width int) help.Model {
	m := help.New()
	m.Width = width
	m.ShortSeparator = sep(th)
	m.Ellipsis = th.Glyphs.Ellipsis
	m.Styles.ShortKey, m.Styles.ShortDesc = th.Key, th.Hint
	m.Styles.ShortSeparator, m.Styles.Ellipsis = th.Hint, th.Hint
	m.Styles.FullKey, m.Styles.FullDesc, m.Styles.FullSeparator = th.Key, th.Hint, th.Hint
	return m
}

// View renders the hint line.
func View(th *theme.Theme, bindings []keys.State, width int) string {
	shown := Shown(th, bindings, width)
	bs := make([]key.Binding, len(shown))
	for i, b := range shown {
		bs[i] = b.Binding()
	}
	line := Model(th, width).ShortHelpView(bs)
	if ansi.StringWidth(line) > width {
		line = ansi.Truncate(line, width, "")
	}
	return line
}
