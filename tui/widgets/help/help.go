// Package help is the scrolling text modal behind ? (bindings, from the key
// registry so it cannot drift) and ! (the messages log): j/k scroll,
// ?/!/esc/q close.
package help

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Model shows lines under a title.
type Model struct {
	th            *theme.Theme
	title         string
	lines         []string
	offset        int
	width, height int
	done          bool
}

// New returns a pager over lines.
func New(th *theme.Theme, title string, lines []string) *Model {
	return &Model{th: th, title: title, lines: lines}
}

// Update scrolls or closes.
func (m *Model) Update(msg tea.Msg) (common.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	switch k.String() {
	case "j", "down":
		m.offset++
	case "k", "up":
		m.offset--
	case "g", "home":
		m.offset = 0
	case "G", "end":
		m.offset = len(m.lines)
	case "?", "!", "esc", "q":
		m.done = true
	}
	m.offset = max(0, min(m.offset, len(m.lines)-m.rows()))
	return m, nil
}

// rows is how many lines fit in the box.
func (m *Model) rows() int { return max(1, m.height-4) }

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.offset = max(0, min(m.offset, len(m.lines)-m.rows()))
}

// View draws the visible lines, each cut to the box: a wrapped line would
// break the scrolling.
func (m *Model) View() string {
	w := m.boxWidth()
	end := min(len(m.lines), m.offset+m.rows()-2)
	shown := make([]string, 0, max(0, end-m.offset))
	for _, l := range m.lines[m.offset:max(m.offset, end)] {
		shown = append(shown, ansi.Truncate(l, w-4, m.th.Glyphs.Ellipsis))
	}
	return m.th.Box(m.title, strings.Join(shown, "\n"), w)
}

// boxWidth is wider than a question's box: these lines are long.
func (m *Model) boxWidth() int { return max(20, min(m.width-4, 110)) }

// Hint is the footer while the pager shows.
func (m *Model) Hint() string { return "j/k scroll · esc closes" }

// Result reports the close.
func (m *Model) Result() (common.Result, bool) { return common.Result{}, m.done }

// Group is one section of the help overlay.
type Group struct {
	Title    string
	Bindings []keys.State
}

// Lines renders binding groups: disabled ones dimmed with their reason,
// read-only hidden ones left out.
func Lines(th *theme.Theme, groups []Group) []string {
	var out []string
	for _, g := range groups {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, th.Bold.Render(g.Title))
		for _, b := range g.Bindings {
			if b.Hidden {
				continue
			}
			line := padRight(b.KeyList(), 14) + b.Help
			if !b.Enabled {
				out = append(out, th.Dim.Render(line+" — "+b.Reason))
				continue
			}
			out = append(out, th.Key.Render(padRight(b.KeyList(), 14))+b.Help)
		}
	}
	return out
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}
