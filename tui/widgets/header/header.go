// Package header draws the top line: the breadcrumb on the left, badges on
// the right.
package header

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/theme"
)

// Badge is one badge; Droppable ones (the server) go first when space is
// short, the others never.
type Badge struct {
	Text      string
	Style     lipgloss.Style
	Droppable bool
}

const badgeGap = "   "

// View renders the header at width.
func View(th *theme.Theme, crumbs []string, badges []Badge, width int) string {
	if width <= 0 {
		return ""
	}
	left := strings.Join(crumbs, " "+th.Glyphs.Sep+" ")
	for {
		right := renderBadges(badges)
		room := width - ansi.StringWidth(right) - 1
		if ansi.StringWidth(left) <= room || !dropOne(&badges) {
			return compose(th, left, right, width)
		}
	}
}

func compose(th *theme.Theme, left, right string, width int) string {
	room := width - ansi.StringWidth(right) - 1
	if right == "" {
		room = width
	}
	if room < 1 {
		return ansi.Truncate(right, width, "")
	}
	if ansi.StringWidth(left) > room {
		left = ansi.TruncateLeft(left, ansi.StringWidth(left)-room+1, th.Glyphs.Ellipsis)
	}
	gap := width - ansi.StringWidth(left) - ansi.StringWidth(right)
	return th.Crumb.Render(left) + strings.Repeat(" ", max(0, gap)) + right
}

func renderBadges(badges []Badge) string {
	parts := make([]string, 0, len(badges))
	for _, b := range badges {
		parts = append(parts, b.Style.Render(b.Text))
	}
	return strings.Join(parts, badgeGap)
}

// dropOne removes the first droppable badge.
func dropOne(badges *[]Badge) bool {
	for i, b := range *badges {
		if b.Droppable {
			*badges = append((*badges)[:i:i], (*badges)[i+1:]...)
			return true
		}
	}
	return false
}
