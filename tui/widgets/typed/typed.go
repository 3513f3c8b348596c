// Package typed is the typed confirmation: the exact name, then enter; a
// mismatch says so and stays; esc cancels (TUI.md §3.1).
package typed

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// Model asks for one exact value.
type Model struct {
	th          *theme.Theme
	title, text string
	expect      string
	input       form.Input
	mismatch    bool
	width       int
	done, ok    bool
}

// New asks the operator to type expect to confirm text.
func New(th *theme.Theme, title, text, expect string) *Model {
	return &Model{th: th, title: title, text: text, expect: expect, input: form.NewInput("", 256)}
}

// Update takes keys into the input; enter checks, esc cancels.
func (m *Model) Update(msg tea.Msg) (common.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done {
		return m, nil
	}
	switch k.String() {
	case "esc":
		m.done = true
		return m, nil
	case "enter":
		if m.input.Value() == m.expect {
			m.done, m.ok = true, true
		} else {
			m.mismatch = true
		}
		return m, nil
	}
	if m.input.Update(k) {
		m.mismatch = false
	}
	return m, nil
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, _ int) {
	m.width = width
	m.input.Width = max(8, theme.BoxWidth(width)-8)
}

// View draws the prompt.
func (m *Model) View() string {
	w := theme.BoxWidth(m.width)
	body := theme.Wrap(m.text, w-4) + "\n\n" +
		"Type " + m.th.Bold.Render(m.expect) + " to confirm:\n" + m.th.Key.Render("> ") + m.input.View(m.th, true)
	if m.mismatch {
		body += "\n" + m.th.FieldError.Render("does not match")
	}
	return m.th.Box(m.title, body, w)
}

// Hint is the footer while the prompt shows.
func (m *Model) Hint() string { return "type the name · enter confirms · esc cancels" }

// Result reports the outcome once there is one.
func (m *Model) Result() (common.Result, bool) {
	return common.Result{OK: m.ok}, m.done
}
