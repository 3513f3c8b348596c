package screen

import (
	"strings"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/vt"
)

// textOf returns the visible screen as text, one line per row, each
// without trailing blanks, and without trailing empty rows: the form of
// tmux's capture-pane -p after the same trimming.
func textOf(e *vt.Emulator) string {
	lines := make([]string, e.Height())
	row := make(uv.Line, e.Width())
	for y := range lines {
		for x := range row {
			row[x] = uv.Cell{}
			if c := e.CellAt(x, y); c != nil {
				row[x] = *c
			}
		}
		lines[y] = lineText(row, e.Width())
	}
	return TrimText(strings.Join(lines, "\n"))
}

// lineText is a row's characters, at most width columns, trailing blanks
// cut. A wide character's second column is not repeated.
func lineText(l uv.Line, width int) string {
	var b strings.Builder
	col := 0
	for i := 0; i < len(l) && col < width; i++ {
		c := l[i]
		switch {
		case c.Width == 0 && c.Content == "":
			if i > 0 && l[i-1].Width > 1 {
				continue // the right half of a wide character
			}
			b.WriteByte(' ')
		default:
			b.WriteString(c.Content)
		}
		col += max(c.Width, 1)
	}
	return strings.TrimRight(b.String(), " ")
}

// TrimText cuts trailing blanks from every line and trailing empty lines,
// so that captures of different terminals compare as text.
func TrimText(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r", ""), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}
