// Package help is the scrolling text modal behind ? (bindings, from the key
// registry so it cannot drift) and ! (the messages log): a bubbles
// viewport, j/k scroll, ?/!/esc/q close.
package help

import (
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Model shows lines under a title.
type Model struct {
	th            *theme.Theme
	title         string
	lines         []string
	vp            viewport.Model
	width, height int
	done          bool
	// wrap breaks long lines under a hanging indent instead of cutting
	// them: the messages log, whose sentences must read whole.
	wrap bool
}

// New returns a pager over lines.
func New(th *theme.Theme, title string, lines []string) *Model {
	m := &Model{th: th, title: title, lines: lines, vp: viewport.New(0, 1)}
	m.vp.KeyMap = keyMap()
	m.vp.MouseWheelEnabled = false
	return m
}

// NewLog returns a pager over lines that wraps each long line under a
// hanging indent of indent columns rather than cutting it.
func NewLog(th *theme.Theme, title string, lines []string) *Model {
	m := New(th, title, lines)
	m.wrap = true
	return m
}

// logIndent is where a wrapped log line goes on: past the "15:04:05 "
// time of its entry.
const logIndent = 9

// keyMap scrolls by line and page and never sideways: the viewport's
// default binds d u f b h l and space, and cairn-tui pages on none of them.
func keyMap() viewport.KeyMap {
	return viewport.KeyMap{
		Down:         key.NewBinding(key.WithKeys("j", "down"), key.WithHelp("j", "down")),
		Up:           key.NewBinding(key.WithKeys("k", "up"), key.WithHelp("k", "up")),
		HalfPageDown: key.NewBinding(key.WithKeys("ctrl+d"), key.WithHelp("ctrl+d", "half down")),
		HalfPageUp:   key.NewBinding(key.WithKeys("ctrl+u"), key.WithHelp("ctrl+u", "half up")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdown", "page down")),
		PageUp:       key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
	}
}

// Update scrolls or closes.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok {
		return m, nil
	}
	switch k.String() {
	case "g", "home":
		m.vp.GotoTop()
	case "G", "end":
		m.vp.GotoBottom()
	case "?", "!", "esc", "q":
		m.done = true
	default:
		m.vp, _ = m.vp.Update(k)
	}
	return m, nil
}

// Offset is the first line shown.
func (m *Model) Offset() int { return m.vp.YOffset }

// SetSize sets the body size the modal sits in; the lines are cut (or,
// for a log, wrapped) to the box here, once per size.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	w := m.boxWidth()
	shown := make([]string, 0, len(m.lines))
	for _, l := range m.lines {
		if !m.wrap || ansi.StringWidth(l) <= w-4 {
			shown = append(shown, ansi.Truncate(l, w-4, m.th.Glyphs.Ellipsis))
			continue
		}
		shown = append(shown, hang(l, w-4)...)
	}
	// The box's border, title and the blank line under it take 4 rows;
	// two more stay free around it. A short list makes a short box.
	m.vp.Width, m.vp.Height = w-4, max(1, min(height-6, len(shown)))
	m.vp.SetContent(strings.Join(shown, "\n"))
	m.vp.SetYOffset(m.vp.YOffset)
}

// View draws the visible lines in the box.
func (m *Model) View() string {
	return m.th.Box(m.title, m.vp.View(), m.boxWidth())
}

// boxWidth is wider than a question's box: these lines are long.
func (m *Model) boxWidth() int { return max(20, min(m.width-4, 110)) }

// Hint is the footer while the pager shows.
func (m *Model) Hint() string { return "j/k scroll · esc closes" }

// Result reports the close.
func (m *Model) Result() (screen.Result, bool) { return screen.Result{}, m.done }

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

// hang wraps l to width, the lines after the first indented by logIndent.
func hang(l string, width int) []string {
	pad := strings.Repeat(" ", logIndent)
	first, rest := ansi.Wrap(l, width, " "), ""
	lines := strings.Split(first, "\n")
	out := []string{lines[0]}
	if len(lines) > 1 {
		rest = strings.Join(lines[1:], " ")
		for _, r := range strings.Split(ansi.Wrap(rest, max(1, width-logIndent), " "), "\n") {
			out = append(out, pad+r)
		}
	}
	return out
}
