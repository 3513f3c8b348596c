package theme

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
)

// BoxWidth is the outer width of a modal in a body of width w.
func BoxWidth(w int) int { return max(20, min(w-4, 76)) }

// Box draws a modal: a title line and body in the modal border, at most
// width columns wide overall.
func (t *Theme) Box(title, body string, width int) string {
	inner := max(10, width-4) // border and padding
	content := t.ModalTitle.Render(title)
	if body != "" {
		content += "\n\n" + body
	}
	return t.Modal.Width(inner + 2).Render(lipgloss.NewStyle().Width(inner).Render(content))
}

// Wrap breaks text at width for modal bodies.
func Wrap(text string, width int) string {
	return lipgloss.NewStyle().Width(max(1, width)).Render(strings.TrimRight(text, "\n"))
}
