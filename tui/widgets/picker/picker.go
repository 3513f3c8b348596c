// Package picker is a modal that picks one item of a list, filtered as the
// operator types (the artifact to load or unpack into a volume). up/down,
// pgup/pgdown and home/end move, enter picks, esc cancels; every other key
// edits the filter, so q and j are text here (explicit modes). An item the
// caller refuses (Check) keeps the picker open with the sentence under the
// list.
package picker

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// Item is one choice: its ID (what Result reports), its name (sanitised
// by the caller: it is drawn as given and filtered on) and a dim note.
type Item struct {
	ID, Name, Note string
}

// Model is one picker.
type Model struct {
	th    *theme.Theme
	title string
	intro string
	items []Item
	check func(id string) string

	input  textinput.Model
	shown  []int // indexes into items that match the filter
	cursor int   // index into shown
	offset int
	err    string

	width, height int
	done, picked  bool
}

// New offers items under title, intro above them; check refuses an item
// with a sentence ("" lets it be picked; nil refuses none).
func New(th *theme.Theme, title, intro string, items []Item, check func(id string) string) *Model {
	m := &Model{th: th, title: title, intro: intro, items: items, check: check, input: form.NewTextInput(th, "", 128)}
	m.input.Focus()
	m.filter()
	return m
}

func (m *Model) filter() {
	q := strings.ToLower(m.input.Value())
	m.shown = m.shown[:0]
	for i, it := range m.items {
		if strings.Contains(strings.ToLower(it.Name), q) {
			m.shown = append(m.shown, i)
		}
	}
	m.cursor, m.offset = 0, 0
}

// Update moves, filters, picks or cancels.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done {
		return m, nil
	}
	switch k.String() {
	case "esc":
		m.done = true
	case "enter":
		m.pick()
	case "up", "shift+tab":
		m.move(-1)
	case "down", "tab":
		m.move(1)
	case "pgup":
		m.move(-m.rows())
	case "pgdown":
		m.move(m.rows())
	case "home":
		m.move(-len(m.shown))
	case "end":
		m.move(len(m.shown))
	default:
		before := m.input.Value()
		m.input, _ = m.input.Update(k) // paste is off: no Cmd to run
		if m.input.Value() != before {
			m.err = ""
			m.filter()
		}
	}
	return m, nil
}

func (m *Model) move(by int) {
	if len(m.shown) == 0 {
		return
	}
	m.err = ""
	m.cursor = max(0, min(len(m.shown)-1, m.cursor+by))
	m.scroll()
}

// scroll keeps the cursor's row in the window.
func (m *Model) scroll() {
	rows := m.rows()
	switch {
	case m.cursor < m.offset:
		m.offset = m.cursor
	case m.cursor >= m.offset+rows:
		m.offset = m.cursor - rows + 1
	}
}

func (m *Model) pick() {
	it, ok := m.Selected()
	if !ok {
		return
	}
	if m.check != nil {
		if m.err = m.check(it.ID); m.err != "" {
			return
		}
	}
	m.done, m.picked = true, true
}

// Selected is the item under the cursor.
func (m *Model) Selected() (Item, bool) {
	if len(m.shown) == 0 {
		return Item{}, false
	}
	return m.items[m.shown[m.cursor]], true
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.input.Width = max(8, theme.BoxWidth(width)-8)
	m.scroll()
}

// chrome is the box's lines around the rows: border, title, blank, intro,
// blank, filter, blank; and below, the more line and the error.
const chrome = 11

// rows is how many items show at once.
func (m *Model) rows() int { return max(1, min(12, m.height-chrome)) }

// View draws the filter, the window of items and the refusal.
func (m *Model) View() string {
	th := m.th
	w := theme.BoxWidth(m.width) - 4
	lines := []string{theme.Wrap(m.intro, w), "", th.Key.Render("> ") + m.input.View(), ""}
	if len(m.shown) == 0 {
		lines = append(lines, th.Dim.Render("nothing matches — backspace widens the filter"))
	}
	end := min(len(m.shown), m.offset+m.rows())
	nameW := 8
	for _, i := range m.shown[m.offset:end] {
		nameW = max(nameW, ansi.StringWidth(m.items[i].Name))
	}
	nameW = min(nameW, w*3/5)
	for i := m.offset; i < end; i++ {
		lines = append(lines, m.row(m.items[m.shown[i]], i == m.cursor, nameW, w))
	}
	if more := len(m.shown) - end; more > 0 || m.offset > 0 {
		lines = append(lines, th.Dim.Render(fmt.Sprintf("%d of %d", m.cursor+1, len(m.shown))))
	}
	if m.err != "" {
		lines = append(lines, "", th.FieldError.Render(theme.Wrap(m.err, w)))
	}
	return th.Box(m.title, strings.Join(lines, "\n"), theme.BoxWidth(m.width))
}

// row is one item: the cursor, the name in a column nameW wide, its note
// dim after it.
func (m *Model) row(it Item, selected bool, nameW, width int) string {
	g := m.th.Glyphs
	gutter := "  "
	if selected {
		gutter = g.Cursor + " "
	}
	name := table.Pad(it.Name, nameW, false, g.Ellipsis)
	line := gutter + name + "  " + m.th.Dim.Render(it.Note)
	line = table.Pad(line, width, false, g.Ellipsis)
	if selected {
		return m.th.Selected.Render(line)
	}
	return line
}

// Hint is the footer while the picker shows.
func (m *Model) Hint() string {
	return "type to filter · up/down select · enter picks · esc cancels"
}

// Result reports the picked item's ID under "id", or the cancellation.
func (m *Model) Result() (screen.Result, bool) {
	if !m.picked {
		return screen.Result{}, m.done
	}
	it, _ := m.Selected()
	return screen.Result{OK: true, Values: map[string]string{"id": it.ID}}, true
}
