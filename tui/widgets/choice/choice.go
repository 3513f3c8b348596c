// Package choice is a modal that offers a few answers, each on its own
// key, besides esc for "not now" (no focused buttons) unless the question
// has no "not now". Keys that are none of them do nothing, so a stray key
// does not answer a question the operator did not ask.
package choice

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Option is one answer: its key, the words the hint shows after the key,
// and the value Result reports under "choice".
type Option struct {
	Key, Word, Value string
}

// Body draws the text between the title and the keys for the box's inner
// width and at most rows lines.
type Body func(width, rows int) []string

// Model is one offer.
type Model struct {
	th       *theme.Theme
	title    string
	body     Body
	options  []Option
	later    string // what esc means, for the hint
	width    int
	height   int
	done     bool
	answered string
}

// New offers options under title; esc means later, and does nothing when
// later is "" (one of the options must be chosen).
func New(th *theme.Theme, title string, body Body, later string, options ...Option) *Model {
	return &Model{th: th, title: title, body: body, options: options, later: later}
}

// Update answers on an option's key or esc; any other key is ignored.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done {
		return m, nil
	}
	if k.Type == tea.KeyEsc {
		m.done = m.later != ""
		return m, nil
	}
	for _, o := range m.options {
		if k.String() == o.Key {
			m.done, m.answered = true, o.Value
		}
	}
	return m, nil
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, height int) { m.width, m.height = width, height }

// chrome is the box's lines around the body: border, title, two blank
// lines and the keys.
const chrome = 6

// View draws the offer, its body cut to the height it has.
func (m *Model) View() string {
	w := theme.BoxWidth(m.width)
	lines := m.body(w-4, max(1, m.height-chrome))
	return m.th.Box(m.title, strings.Join(lines, "\n")+"\n\n"+m.th.Bold.Render(m.keys()), w)
}

func (m *Model) keys() string {
	parts := make([]string, 0, len(m.options)+1)
	for _, o := range m.options {
		parts = append(parts, o.Key+" "+o.Word)
	}
	if m.later != "" {
		parts = append(parts, "esc "+m.later)
	}
	return strings.Join(parts, " "+m.th.Glyphs.Dot+" ")
}

// Hint is the footer while the offer shows.
func (m *Model) Hint() string { return m.keys() }

// Result reports the answer once given: OK with Values["choice"] for an
// option, not OK for esc.
func (m *Model) Result() (screen.Result, bool) {
	if m.answered == "" {
		return screen.Result{}, m.done
	}
	return screen.Result{OK: true, Values: map[string]string{"choice": m.answered}}, m.done
}
