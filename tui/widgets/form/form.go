// Package form is cairn-tui's form modal (TUI.md §3.5): text fields and
// checkboxes; tab/shift+tab or down/up move, enter submits, esc cancels.
// A submitted form stays open, busy, until the root settles it: field
// errors show under their field, anything else closes it.
package form

import (
	"fmt"
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
	// Note is a dim line under the field.
	Note string
	// Complete, when set, makes tab complete the field instead of moving
	// on: it returns the Cmd that finds the completion (a CompletedMsg);
	// down/up still move between fields.
	Complete func(value string) tea.Cmd
	// From names another field this one follows through Derive until the
	// operator edits it (the name derived from a file path).
	From   string
	Derive func(string) string
}

// CompletedMsg is a completion found for a field: the new value and, when
// more than one entry matches, the candidates. Value "" keeps the field.
type CompletedMsg struct {
	Key, From, Value string
	Candidates       []string
}

type field struct {
	Field
	input      Input
	checked    bool
	err        string
	edited     bool     // typed into by the operator
	candidates []string // of the last completion
}

// Model is one form.
type Model struct {
	th        *theme.Theme
	title     string
	fields    []field
	focus     int
	width     int
	busy      bool
	busyText  string
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

// Update handles keys; while busy only esc, which closes the form and
// leaves the operation running.
func (m *Model) Update(msg tea.Msg) (common.Modal, tea.Cmd) {
	if c, ok := msg.(CompletedMsg); ok {
		m.completed(c)
		return m, nil
	}
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done || (m.busy && k.String() != "esc") {
		return m, nil
	}
	switch k.String() {
	case "esc":
		m.done = true
	case "tab":
		if f := &m.fields[m.focus]; f.Complete != nil {
			return m, f.Complete(f.input.Value())
		}
		m.focus = (m.focus + 1) % len(m.fields)
	case "down":
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
		f.err, f.edited, f.candidates = "", true, nil
		m.derive(f.Key)
	}
}

// derive updates the fields that follow key and were not edited.
func (m *Model) derive(key string) {
	from := m.value(key)
	for i := range m.fields {
		f := &m.fields[i]
		if f.From == key && f.Derive != nil && !f.edited {
			f.input.SetValue(f.Derive(from))
			f.err = ""
		}
	}
}

func (m *Model) value(key string) string {
	for _, f := range m.fields {
		if f.Key == key {
			return f.input.Value()
		}
	}
	return ""
}

// completed applies a completion unless the field moved on meanwhile.
func (m *Model) completed(c CompletedMsg) {
	for i := range m.fields {
		f := &m.fields[i]
		if f.Key != c.Key || f.input.Value() != c.From {
			continue
		}
		f.candidates, f.err = c.Candidates, ""
		if c.Value != "" && c.Value != c.From {
			f.input.SetValue(c.Value)
			m.derive(f.Key)
		}
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
func (m *Model) Busy(frame int) { m.BusyWith(frame, "saving…") }

// BusyWith is Busy with its own words ("checking the file…").
func (m *Model) BusyWith(frame int, text string) { m.busy, m.frame, m.busyText = true, frame, text }

// Fail shows err under the field key (the focused one when the form has
// no such field) and makes the form editable again.
func (m *Model) Fail(key, err string) {
	m.busy = false
	for i := range m.fields {
		if m.fields[i].Key == key {
			m.fields[i].err = err
			m.focus = i
			return
		}
	}
	m.fields[m.focus].err = err
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
	if m.busy {
		return "esc closes (the operation goes on)"
	}
	if m.fields[m.focus].Complete != nil {
		return "tab completes · down next field · enter submits · esc cancels"
	}
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
		b.WriteString("\n\n" + m.th.Dim.Render(m.th.Glyphs.Frame(m.frame)+" "+m.busyText))
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
	if f.Note != "" {
		line += "\n" + m.th.Dim.Render(f.Note)
	}
	if f.err != "" {
		return line + "\n" + m.th.FieldError.Render(f.err)
	}
	if len(f.candidates) > 0 {
		line += "\n" + m.th.Dim.Render(candidateLines(f.candidates))
	}
	if f.Warn != nil {
		if w := f.Warn(f.input.Value()); w != "" {
			line += "\n" + m.th.Warn.Render(w)
		}
	}
	return line
}

// maxCandidates is how many completion candidates show under a field.
const maxCandidates = 6

func candidateLines(cs []string) string {
	shown := cs[:min(len(cs), maxCandidates)]
	text := strings.Join(shown, "  ")
	if n := len(cs) - len(shown); n > 0 {
		text += fmt.Sprintf("  +%d more", n)
	}
	return text
}
