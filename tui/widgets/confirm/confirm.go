// Package confirm is the (y/N) modal: only y confirms, any other key
// cancels.
package confirm

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Model is one question.
type Model struct {
	th          *theme.Theme
	title, text string
	width       int
	done, ok    bool
}

// New asks text under title.
func New(th *theme.Theme, title, text string) *Model {
	return &Model{th: th, title: title, text: text}
}

// Update answers on the first key.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
	if k, ok := msg.(tea.KeyMsg); ok && !m.done {
		m.done, m.ok = true, k.String() == "y"
	}
	return m, nil
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, _ int) { m.width = width }

// View draws the question.
func (m *Model) View() string {
	w := theme.BoxWidth(m.width)
	return m.th.Box(m.title, theme.Wrap(m.text, w-4)+"\n\n"+m.th.Bold.Render("(y/N)"), w)
}

// Hint is the footer while the question shows.
func (m *Model) Hint() string { return "y confirms · any other key cancels" }

// Result reports the answer once given.
func (m *Model) Result() (screen.Result, bool) {
	return screen.Result{OK: m.ok}, m.done
}
