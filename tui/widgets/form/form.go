// Package form is cairn-tui's form modal (TUI.md §3.5): text fields and
// checkboxes; tab/shift+tab or down/up move, enter submits, esc cancels.
// A submitted form stays open, busy, until the root settles it: field
// errors show under their field, anything else closes it.
package form

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Field describes one field.
type Field struct {
	Key, Label string
	Check      bool   // a checkbox instead of text
	Value      string // initial text
	Checked    bool   // initial checkbox state
	Limit      int
	// Validate returns what blocks submitting ("" when valid).
	Validate func(string) string
	// Warn returns a note that does not block ("" for none).
	Warn func(string) string
}

type field struct {
	Field
	input   Input
	checked bool
	err     string
}

// Model is one form.
type Model struct {
	th        *theme.Theme
	title     string
	fields    []field
	focus     int
	width     int
	busy      bool
	frame     int
	submitted bool
	done      bool
}

// New builds a form.
func New(th *theme.Theme, title string, fields ...Field) *Model {
	m := &Model{th: th, title: title}
	for _, f := range fields {
		m.fields = append(m.fields, field{Field: f, input: NewInput(f.Value, f.Limit), checked: f.Checked})
	}
	return m
}

// Update handles keys; nothing is taken while busy.
func (m *Model) Update(msg tea.Msg) (common.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done || m.busy {
		return m, nil
	}
	switch k.String() {
	case "esc":
		m.done = true
	case "tab", "down":
		m.focus = (m.focus + 1) % len(m.fields)
	case "shift+tab", "up":
		m.focus = (m.focus + len(m.fields) - 1) % len(m.fields)
	case "enter":
		m.submit()
	default:
		m.edit(k)
	}
	return m, nil
}

func (m *Model) edit(k tea.KeyMsg) {
	f := &m.fields[m.focus]
	if f.Check {
		if k.String() == " " || k.String() == "x" {
			f.checked = !f.checked
		}
		return
	}
	if f.input.Update(k) {
		f.err = ""
	}
}

// submit validates every field; the first invalid one takes the focus.
func (m *Model) submit() {
	first := -1
	for i := range m.fields {
		f := &m.fields[i]
		f.err = ""
		if f.Validate != nil && !f.Check {
			f.err = f.Validate(f.input.Value())
		}
		if f.err != "" && first < 0 {
			first = i
		}
	}
	if first >= 0 {
		m.focus = first
		return
	}
	m.submitted = true
}

// Result returns the values once per submit, or the cancellation.
func (m *Model) Result() (common.Result, bool) {
	if m.done {
		return common.Result{}, true
	}
	if !m.submitted {
		return common.Result{}, false
	}
	m.submitted = false
	r := common.Result{OK: true, Values: map[string]string{}, Checks: map[string]bool{}}
	for _, f := range m.fields {
		r.Values[f.Key] = f.input.Value()
		r.Checks[f.Key] = f.checked
	}
	return r, true
}

// Busy marks the form as submitted and waiting; frame is the spinner step.
func (m *Model) Busy(frame int) { m.busy, m.frame = true, frame }

// Fail shows err under the field key and makes the form editable again.
func (m *Model) Fail(key, err string) {
	m.busy = false
	for i := range m.fields {
		if m.fields[i].Key == key {
			m.fields[i].err = err
			m.focus = i
		}
	}
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, _ int) {
	m.width = width
	for i := range m.fields {
		m.fields[i].input.Width = max(8, theme.BoxWidth(width)-8)
	}
}

// Hint is the footer while the form shows.
func (m *Model) Hint() string {
	return "tab next field · space toggles · enter submits · esc cancels"
}

// View draws the fields.
func (m *Model) View() string {
	var b strings.Builder
	for i, f := range m.fields {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(m.fieldView(i, f))
	}
	if m.busy {
		b.WriteString("\n\n" + m.th.Dim.Render(m.th.Glyphs.Frame(m.frame)+" saving…"))
	}
	return m.th.Box(m.title, b.String(), theme.BoxWidth(m.width))
}

func (m *Model) fieldView(i int, f field) string {
	focused := i == m.focus && !m.busy
	label := m.th.Label
	if focused {
		label = m.th.FieldFocus
	}
	if f.Check {
		box := "[ ]"
		if f.checked {
			box = "[x]"
		}
		return label.Render(box + " " + f.Label)
	}
	line := label.Render(f.Label) + "\n" + m.th.Key.Render("> ") + f.input.View(m.th, focused)
	if f.err != "" {
		return line + "\n" + m.th.FieldError.Render(f.err)
	}
	if f.Warn != nil {
		if w := f.Warn(f.input.Value()); w != "" {
			line += "\n" + m.th.Warn.Render(w)
		}
	}
	return line
}
