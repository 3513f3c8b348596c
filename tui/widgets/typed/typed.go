// Package typed is the typed confirmation: the exact name, then enter; a
// mismatch says so and stays; esc cancels.
package typed

import (
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// Model asks for one exact value.
type Model struct {
	th          *theme.Theme
	title, text string
	expect      string
	input       textinput.Model
	mismatch    bool
	width       int
	done, ok    bool
}

// New asks the operator to type expect to confirm text.
func New(th *theme.Theme, title, text, expect string) *Model {
	m := &Model{th: th, title: title, text: text, expect: expect, input: form.NewTextInput(th, "", 256)}
	m.input.Focus()
	return m
}

// Update takes keys into the input; enter checks, esc cancels.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
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
	before := m.input.Value()
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(k)
	if m.input.Value() != before {
		m.mismatch = false
	}
	return m, cmd
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
		"Type " + m.th.Bold.Render(m.expect) + " to confirm:\n" + m.th.Key.Render("> ") + m.input.View()
	if m.mismatch {
		body += "\n" + m.th.FieldError.Render("does not match")
	}
	return m.th.Box(m.title, body, w)
}

// Hint is the footer while the prompt shows.
func (m *Model) Hint() string { return "type the name · enter confirms · esc cancels" }

// Result reports the outcome once there is one.
func (m *Model) Result() (screen.Result, bool) {
	return screen.Result{OK: m.ok}, m.done
}
