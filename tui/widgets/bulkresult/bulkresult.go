// Package bulkresult is the modal that shows how a bulk action went, row
// by row: a summary (✓ 997 deleted · ✕ 3 refused), then each refused row
// with its sentence, then each row that succeeded. j/k, pgup/pgdown,
// ctrl+d/ctrl+u and g/G scroll; esc, q and enter close.
package bulkresult

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Row is one row's result: its name (untrusted: shown sanitised) and its
// error, nil when it succeeded.
type Row struct {
	Name string
	Err  error
}

// Rows are a bulk action's results as rows, named by what each op acted
// on, in the same order.
func Rows(results []ops.DoneMsg) []Row {
	out := make([]Row, len(results))
	for i, d := range results {
		out[i] = Row{Name: d.Op.Subject(), Err: d.Err}
	}
	return out
}

// Model is one results list.
type Model struct {
	th            *theme.Theme
	title, verb   string
	rows          []Row
	sentence      func(error) string
	ok, refused   int
	vp            viewport.Model
	width, height int
	done          bool
}

// New lists rows under title. verb is what a success did ("deleted",
// "torn down"); sentence turns a refusal into its one sentence
// (errtext.Sentence with the row's subject, say).
func New(th *theme.Theme, title, verb string, rows []Row, sentence func(error) string) *Model {
	m := &Model{th: th, title: title, verb: verb, rows: rows, sentence: sentence, vp: viewport.New(0, 1)}
	m.vp.KeyMap = keyMap()
	m.vp.MouseWheelEnabled = false
	for _, r := range rows {
		if r.Err != nil {
			m.refused++
		} else {
			m.ok++
		}
	}
	return m
}

// keyMap scrolls by line and page, never sideways, as help's does.
func keyMap() viewport.KeyMap {
	return viewport.KeyMap{
		Down:         key.NewBinding(key.WithKeys("j", "down")),
		Up:           key.NewBinding(key.WithKeys("k", "up")),
		HalfPageDown: key.NewBinding(key.WithKeys("ctrl+d")),
		HalfPageUp:   key.NewBinding(key.WithKeys("ctrl+u")),
		PageDown:     key.NewBinding(key.WithKeys("pgdown")),
		PageUp:       key.NewBinding(key.WithKeys("pgup")),
	}
}

// Update scrolls or closes.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done {
		return m, nil
	}
	switch k.String() {
	case "esc", "q", "enter":
		m.done = true
	case "g", "home":
		m.vp.GotoTop()
	case "G", "end":
		m.vp.GotoBottom()
	default:
		m.vp, _ = m.vp.Update(k)
	}
	return m, nil
}

// Counts are how many rows succeeded and how many were refused.
func (m *Model) Counts() (ok, refused int) { return m.ok, m.refused }

// Offset is the first row line shown.
func (m *Model) Offset() int { return m.vp.YOffset }

// chrome is the box's lines around the rows: border, title and the
// blank under it, the summary and a blank, the position line, and one
// free line.
const chrome = 8

// SetSize sets the body size the modal sits in; the rows are laid out
// to the box here, once per size.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	w := m.boxWidth() - 4
	lines := m.lines(w)
	m.vp.Width, m.vp.Height = w, max(1, min(height-chrome, len(lines)))
	m.vp.SetContent(strings.Join(lines, "\n"))
	m.vp.SetYOffset(m.vp.YOffset)
}

// lines are the refused rows, each sentence wrapped under a hanging
// indent so it reads whole, then the rows that succeeded, cut to w.
func (m *Model) lines(w int) []string {
	g := m.th.Glyphs
	out := make([]string, 0, len(m.rows))
	for _, r := range m.rows {
		if r.Err == nil {
			continue
		}
		text := termkit.Sanitize(r.Name) + " " + dash(g) + " " + termkit.Sanitize(m.sentence(r.Err))
		for i, l := range strings.Split(ansi.Wrap(text, max(1, w-2), " "), "\n") {
			if i == 0 {
				out = append(out, m.th.Bad.Render(failGlyph(g))+" "+l)
				continue
			}
			out = append(out, "  "+l)
		}
	}
	for _, r := range m.rows {
		if r.Err == nil {
			out = append(out, m.th.Good.Render(g.OK)+" "+ansi.Truncate(termkit.Sanitize(r.Name), w-2, g.Ellipsis))
		}
	}
	return out
}

// dash parts a row from its sentence: an em dash, or - in ascii.
func dash(g theme.Glyphs) string {
	if g.Dash == "-" {
		return "-"
	}
	return "—"
}

// failGlyph is the error toast's mark without its word: ✕, or x.
func failGlyph(g theme.Glyphs) string { return strings.Fields(g.Error)[0] }

// Summary is the first line: how many succeeded and how many were
// refused, each only when there are some.
func (m *Model) Summary() string {
	g := m.th.Glyphs
	var parts []string
	if m.ok > 0 || m.refused == 0 {
		parts = append(parts, m.th.Good.Render(g.OK)+" "+termkit.Count(int64(m.ok))+" "+m.verb)
	}
	if m.refused > 0 {
		parts = append(parts, m.th.Bad.Render(failGlyph(g))+" "+termkit.Count(int64(m.refused))+" refused")
	}
	return strings.Join(parts, " "+g.Dot+" ")
}

// View draws the summary, the visible rows and, when they scroll, where
// the window is.
func (m *Model) View() string {
	body := m.Summary() + "\n\n" + m.vp.View()
	if total := m.vp.TotalLineCount(); total > m.vp.Height {
		first := m.vp.YOffset + 1
		last := min(total, m.vp.YOffset+m.vp.Height)
		body += "\n" + m.th.Dim.Render(fmt.Sprintf("lines %s–%s of %s · j/k scroll",
			termkit.Count(int64(first)), termkit.Count(int64(last)), termkit.Count(int64(total))))
	}
	return m.th.Box(m.title, body, m.boxWidth())
}

// boxWidth is wider than a question's: sentences are long.
func (m *Model) boxWidth() int { return max(20, min(m.width-4, 110)) }

// Hint is the footer while the results show.
func (m *Model) Hint() string { return "j/k scroll · esc closes" }

// Result reports the close.
func (m *Model) Result() (screen.Result, bool) { return screen.Result{}, m.done }
