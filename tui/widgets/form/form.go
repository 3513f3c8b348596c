// Package form is cairn-tui's form modal: bubbles textinput fields and
// checkboxes; tab/shift+tab or down/up move, enter submits, esc cancels,
// and every other key goes to the focused field, so q types a q. Each
// keystroke checks the field (Validate, Warn) and shows the answer under
// it; enter on an invalid form moves to the first invalid field. A
// submitted form stays open, busy, until the root settles it: field errors
// show under their field, anything else closes it.
package form

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Field describes one field.
type Field struct {
	Key, Label string
	Check      bool   // a checkbox instead of text
	Value      string // initial text
	Checked    bool   // initial checkbox state
	Limit      int    // runes; 0 is no limit
	// Validate returns what blocks submitting ("" when valid). It runs on
	// every change of the value; its answer shows once the operator typed
	// into the field or tried to submit.
	Validate func(string) string
	// Warn returns a note that does not block ("" for none); it runs on
	// every change of the value and shows at once.
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
	// Sources and DeriveFrom are From and Derive over several fields (a
	// name from a path and an archive format): an edit of any of them
	// derives the field again from every value (value reads one by key).
	Sources    []string
	DeriveFrom func(value func(key string) string) string
}

// CompletedMsg is a completion found for a field: the new value and, when
// more than one entry matches, the candidates. Value "" keeps the field.
type CompletedMsg struct {
	Key, From, Value string
	Candidates       []string
}

type field struct {
	Field
	input      textinput.Model
	checked    bool
	err        string   // Validate's answer, or the server's refusal (Fail)
	warn       string   // Warn's answer
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
	height    int
	busy      bool
	busyText  string
	frame     int
	tried     bool // enter was pressed once: every field's error shows
	submitted bool
	done      bool
}

// New builds a form with the focus on its first field.
func New(th *theme.Theme, title string, fields ...Field) *Model {
	m := &Model{th: th, title: title}
	for _, f := range fields {
		fl := field{Field: f, input: NewTextInput(th, f.Value, f.Limit), checked: f.Checked}
		fl.check()
		m.fields = append(m.fields, fl)
	}
	m.refocus()
	return m
}

// check runs Validate and Warn on the field's value.
func (f *field) check() {
	if f.Check {
		return
	}
	f.err, f.warn = "", ""
	if f.Validate != nil {
		f.err = f.Validate(f.input.Value())
	}
	if f.Warn != nil {
		f.warn = f.Warn(f.input.Value())
	}
}

// refocus gives the focused field the textinput focus (its cursor) and
// takes it from the others; a busy form has none.
func (m *Model) refocus() {
	for i := range m.fields {
		if i == m.focus && !m.busy {
			m.fields[i].input.Focus() // a static cursor: no blink Cmd
		} else {
			m.fields[i].input.Blur()
		}
	}
}

// Update handles keys; while busy only esc, which closes the form and
// leaves the operation running.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
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
		m.move(1)
	case "down":
		m.move(1)
	case "shift+tab", "up":
		m.move(-1)
	case "enter":
		m.submit()
	default:
		return m, m.edit(k)
	}
	return m, nil
}

func (m *Model) move(by int) {
	m.focus = (m.focus + by + len(m.fields)) % len(m.fields)
	m.refocus()
}

func (m *Model) edit(k tea.KeyMsg) tea.Cmd {
	f := &m.fields[m.focus]
	if f.Check {
		if k.String() == " " || k.String() == "x" {
			f.checked = !f.checked
		}
		return nil
	}
	before := f.input.Value()
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(k)
	if f.input.Value() != before {
		f.edited, f.candidates = true, nil
		// Not textinput's own Validate: it checks the initial value too,
		// and a backspace on an empty field clears its error.
		f.check()
		m.derive(f.Key)
	}
	return cmd
}

// derive updates the fields that follow key and were not edited.
func (m *Model) derive(key string) {
	from := m.value(key)
	for i := range m.fields {
		f := &m.fields[i]
		switch {
		case f.edited:
		case f.From == key && f.Derive != nil:
			SetText(&f.input, f.Derive(from))
			f.check()
		case f.DeriveFrom != nil && slices.Contains(f.Sources, key):
			SetText(&f.input, f.DeriveFrom(m.value))
			f.check()
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
		f.candidates = c.Candidates
		if c.Value != "" && c.Value != c.From {
			SetText(&f.input, c.Value)
			m.derive(f.Key)
		}
		f.check() // a refusal of the old path gives way to the candidates
	}
}

// submit checks every field; the first invalid one takes the focus.
func (m *Model) submit() {
	m.tried = true
	first := -1
	for i := range m.fields {
		f := &m.fields[i]
		f.check()
		if f.err != "" && first < 0 {
			first = i
		}
	}
	if first >= 0 {
		m.focus = first
		m.refocus()
		return
	}
	m.submitted = true
}

// Result returns the values once per submit, or the cancellation.
func (m *Model) Result() (screen.Result, bool) {
	if m.done {
		return screen.Result{}, true
	}
	if !m.submitted {
		return screen.Result{}, false
	}
	m.submitted = false
	r := screen.Result{OK: true, Values: map[string]string{}, Checks: map[string]bool{}}
	for _, f := range m.fields {
		r.Values[f.Key] = f.input.Value()
		r.Checks[f.Key] = f.checked
	}
	return r, true
}

// Busy marks the form as submitted and waiting; frame is the spinner step.
func (m *Model) Busy(frame int) { m.BusyWith(frame, "saving…") }

// BusyWith is Busy with its own words ("checking the file…").
func (m *Model) BusyWith(frame int, text string) {
	m.busy, m.frame, m.busyText = true, frame, text
	m.refocus()
}

// Fail shows err under the field key (the focused one when the form has
// no such field) and makes the form editable again. The next edit of the
// field replaces err with the field's own check.
func (m *Model) Fail(key, err string) {
	m.busy = false
	at := m.focus
	for i := range m.fields {
		if m.fields[i].Key == key {
			at = i
			break
		}
	}
	m.focus, m.tried = at, true // shown even if never typed into
	m.fields[at].err = err
	m.refocus()
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
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
	body := b.String()
	if m.busy {
		busy := m.th.Dim.Render(theme.Wrap(m.th.Glyphs.Frame(m.frame)+" "+m.busyText, theme.BoxWidth(m.width)-4))
		// Under the fields, unless the box would then be cut before it
		// (a short window): then right under the title.
		if boxChrome+strings.Count(body+"\n\n"+busy, "\n")+1 > m.height && m.height > 0 {
			body = busy + "\n\n" + body
		} else {
			body += "\n\n" + busy
		}
	}
	return m.th.Box(m.title, body, theme.BoxWidth(m.width))
}

func (m *Model) fieldView(i int, f field) string {
	label := m.th.Label
	if i == m.focus && !m.busy {
		label = m.th.FieldFocus
	}
	if f.Check {
		box := "[ ]"
		if f.checked {
			box = "[x]"
		}
		return label.Render(box + " " + f.Label)
	}
	line := label.Render(f.Label) + "\n" + m.th.Key.Render("> ") + f.input.View()
	if f.Note != "" {
		line += "\n" + m.th.Dim.Render(f.Note)
	}
	if f.err != "" && (f.edited || m.tried) {
		return line + "\n" + m.th.FieldError.Render(f.err)
	}
	if len(f.candidates) > 0 {
		line += "\n" + m.th.Dim.Render(candidateLines(f.candidates))
	}
	if f.warn != "" {
		line += "\n" + m.th.Warn.Render(f.warn)
	}
	return line
}

// boxChrome is the lines of a modal box around its body: the borders,
// the title and the blank line under it.
const boxChrome = 4

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
