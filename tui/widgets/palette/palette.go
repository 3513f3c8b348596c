// Package palette is the command palette behind ':' (after k9s's prompt):
// one line, ':' and a text input, and under it suggestions ranked by
// fuzzy match (sahilm/fuzzy) with the matched characters emphasised. The
// first word completes against the command table; once a command and a
// space are typed, each argument completes against the candidates the
// root's Source gives for it (workspace names, WS/NAME of artifacts,
// contexts), fetched once per argument per opening and kept.
//
// Keys: tab completes the selected suggestion into the line; enter runs
// the line if it is a complete command whose arguments are known
// candidates (or have none to be checked against), else completes the
// selected suggestion and runs it if that makes the line complete, else
// says what is wrong and stays open; esc cancels. up/down (ctrl+p/ctrl+n)
// walk the history while the line is empty or still holds a recalled
// line, and move the selection otherwise — so recalling starts from an
// empty line and any edit turns the arrows back to the suggestions.
//
// The palette only parses: its Result names the command and arguments
// (Invocation reads them), and the root decides what a command does.
package palette

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// maxRows bounds the suggestions shown at once.
const maxRows = 10

// chrome is the box's lines around the suggestions: border, title and
// the blank under it, the prompt, the error, the usage line, the count,
// and one free line each side of the box.
const chrome = 11

// Model is one opening of the palette.
type Model struct {
	th   *theme.Theme
	st   styles
	hist *History
	src  Source

	input    textinput.Model
	matchers map[slotKey]*matcher
	slot     slot
	listed   bool  // the line has a slot to complete
	hits     []hit // the suggestions shown, best first
	total    int   // how many match in all
	sel      int   // the selected suggestion, -1 for none
	recall   int   // how far back in the history the line is, -1 when not
	err      string
	lines    []string // rendered in Update: the usage line and the rows

	width, height int
	done, ok      bool
	cmd           Command
	args          []string
	line          string
}

// styles are built once per palette: the row text, the matched
// characters, the note, each plain and selected.
type styles struct {
	text, hit, note, selText, selHit, selNote lipgloss.Style
}

func newStyles(th *theme.Theme) styles {
	return styles{
		text: th.Field, hit: th.Bold.Underline(true), note: th.Dim,
		selText: th.Selected, selHit: th.Selected.Underline(true), selNote: th.Selected,
	}
}

// New opens the palette. hist is the root's history, kept across
// openings (nil keeps none); src gives argument candidates (nil gives
// none).
func New(th *theme.Theme, hist *History, src Source) *Model {
	if hist == nil {
		hist = NewHistory(HistorySize)
	}
	m := &Model{
		th: th, st: newStyles(th), hist: hist, src: src,
		input:    form.NewTextInput(th, "", 1024),
		matchers: map[slotKey]*matcher{{}: {s: commandSet()}},
		recall:   -1,
	}
	m.input.Focus()
	m.refresh()
	return m
}

// Update edits the line, completes, walks the history, runs or cancels.
func (m *Model) Update(msg tea.Msg) (screen.Modal, tea.Cmd) {
	k, ok := msg.(tea.KeyMsg)
	if !ok || m.done {
		return m, nil
	}
	switch k.String() {
	case "esc":
		m.done = true
	case "enter":
		m.enter()
	case "tab":
		m.complete()
	case "up", "ctrl+p":
		m.arrow(-1)
	case "down", "ctrl+n":
		m.arrow(1)
	default:
		before := m.input.Value()
		m.input, _ = m.input.Update(k) // paste is off: no Cmd to run
		if m.input.Value() != before {
			m.recall = -1
			m.refresh()
		}
	}
	m.render()
	return m, nil
}

// walking reports the arrows walk the history rather than the list.
func (m *Model) walking() bool { return m.recall >= 0 || m.input.Value() == "" }

func (m *Model) arrow(by int) {
	if !m.walking() {
		if len(m.hits) > 0 {
			m.sel = max(0, min(len(m.hits)-1, m.sel+by))
		}
		return
	}
	n := m.recall - by // up (-1) goes one further back
	if n >= m.hist.Len() || n < -1 || (n == -1 && m.recall == -1) {
		return
	}
	m.recall = n
	text := ""
	if n >= 0 {
		text = m.hist.at(n)
	}
	m.setLine(text)
}

// setLine replaces the line (the cursor at its end) and re-ranks.
func (m *Model) setLine(text string) {
	form.SetText(&m.input, text)
	m.refresh()
}

// refresh finds the slot being completed and ranks its candidates; the
// first suggestion is selected unless the arrows walk the history.
func (m *Model) refresh() {
	m.err = ""
	m.slot, m.listed = locate(m.input.Value())
	m.hits, m.total, m.sel = nil, 0, -1
	if !m.listed {
		return
	}
	m.hits, m.total = m.matcher(m.slot.key()).rank(m.slot.query, m.rows())
	if len(m.hits) > 0 && !m.walking() {
		m.sel = 0
	}
}

// matcher is the slot's ranker, its candidates fetched on first use.
func (m *Model) matcher(k slotKey) *matcher {
	if mt, ok := m.matchers[k]; ok {
		return mt
	}
	var cands []Candidate
	if m.src != nil {
		cands = m.src(k.cmd, k.arg)
	}
	mt := &matcher{s: newSet(cands)}
	m.matchers[k] = mt
	return mt
}

// complete puts the selected suggestion into the line: a command and a
// space when it takes arguments, an argument and a space when more
// follow.
func (m *Model) complete() {
	if m.sel < 0 {
		return
	}
	entry := m.hits[m.sel].entry
	text := m.matcher(m.slot.key()).s.text[entry]
	if more(m.slot, entry) {
		text += " "
	}
	m.setLine(m.input.Value()[:m.slot.start] + text)
}

// more reports words to come after the slot's entry: a command's
// arguments, or an argument's successors.
func more(s slot, entry int) bool {
	if s.cmd == "" {
		return len(commands[entry].Args) > 0
	}
	c, _ := Lookup(s.cmd)
	return s.arg < len(c.Args)-1
}

// enter runs a complete line, or completes the selection and runs it if
// that makes the line complete, or says why it cannot.
func (m *Model) enter() {
	line := m.input.Value()
	if strings.TrimSpace(line) == "" {
		return
	}
	c, args, err := Parse(line)
	if err == nil && (m.known(c, args) || m.sel < 0) {
		m.finish(c, args)
		return
	}
	if m.sel >= 0 {
		m.complete()
		if c, args, err = Parse(m.input.Value()); err == nil {
			m.finish(c, args)
		}
		return
	}
	m.err = err.Error()
}

// known reports every argument is one of its candidates, or has none to
// be checked against.
func (m *Model) known(c Command, args []string) bool {
	for i, a := range args {
		s := m.matcher(slotKey{cmd: c.Name, arg: i}).s
		if _, ok := s.lookup(a); len(s.text) > 0 && !ok {
			return false
		}
	}
	return true
}

// finish ends the palette with c: each argument shown escaped goes back
// to its raw value; the line goes into the history.
func (m *Model) finish(c Command, args []string) {
	for i, a := range args {
		args[i] = m.matcher(slotKey{cmd: c.Name, arg: i}).s.value(a)
	}
	m.line = strings.TrimSpace(m.input.Value())
	m.hist.Add(m.line)
	m.done, m.ok, m.cmd, m.args = true, true, c, args
}

// SetSize sets the body size the modal sits in.
func (m *Model) SetSize(width, height int) {
	m.width, m.height = width, height
	m.input.Width = max(8, theme.BoxWidth(width)-8)
	sel, err := m.sel, m.err
	m.refresh()
	if sel >= 0 && sel < len(m.hits) {
		m.sel = sel
	}
	m.err = err
	m.render()
}

// rows is how many suggestions show at once.
func (m *Model) rows() int { return max(1, min(maxRows, m.height-chrome)) }

// Value is the line as typed.
func (m *Model) Value() string { return m.input.Value() }

// Selected is the text of the selected suggestion.
func (m *Model) Selected() (string, bool) {
	if m.sel < 0 {
		return "", false
	}
	return m.matcher(m.slot.key()).s.text[m.hits[m.sel].entry], true
}

// View draws the prompt, what is wrong, and the suggestions.
func (m *Model) View() string {
	body := m.th.Key.Render(":") + m.input.View()
	if m.err != "" {
		body += "\n" + m.th.FieldError.Render(theme.Wrap(m.err, theme.BoxWidth(m.width)-4))
	}
	if len(m.lines) > 0 {
		body += "\n" + strings.Join(m.lines, "\n")
	}
	return m.th.Box("Command", body, theme.BoxWidth(m.width))
}

// render draws the usage line, the rows and the count, in Update.
func (m *Model) render() {
	m.lines = m.lines[:0]
	w := theme.BoxWidth(m.width) - 4
	if u := m.usage(); u != "" {
		m.lines = append(m.lines, m.th.Dim.Render(ansi.Truncate(u, w, m.th.Glyphs.Ellipsis)))
	} else {
		m.lines = append(m.lines, "")
	}
	if !m.listed {
		return
	}
	s := m.matcher(m.slot.key()).s
	if len(m.hits) == 0 && len(s.text) > 0 {
		m.lines = append(m.lines, m.th.Dim.Render("nothing matches"))
		return
	}
	textW := m.textWidth(s, w)
	for i, h := range m.hits {
		m.lines = append(m.lines, m.row(s, h, i == m.sel, textW, w))
	}
	if m.total > len(m.hits) {
		count := termkit.Count(int64(len(m.hits))) + " of " + termkit.Count(int64(m.total)) + " — type to narrow"
		m.lines = append(m.lines, m.th.Dim.Render(count))
	}
}

// usage is the typed command's usage and help, once its word is done.
func (m *Model) usage() string {
	name, _ := cutWord(m.input.Value())
	c, ok := Lookup(name)
	if !ok || (m.listed && m.slot.cmd == "") {
		return ""
	}
	return ":" + c.Usage() + " — " + c.Help
}

// label is an entry's text as its row shows it: a command with its
// usage.
func (m *Model) label(s *set, entry int) string {
	if m.slot.cmd == "" {
		return commands[entry].Usage()
	}
	return s.text[entry]
}

// textWidth is the column the shown texts take: the widest, at most 3/5
// of the row.
func (m *Model) textWidth(s *set, w int) int {
	textW := 8
	for _, h := range m.hits {
		textW = max(textW, ansi.StringWidth(m.label(s, h.entry)))
	}
	return min(textW, w*3/5)
}

// row is one suggestion: the cursor, the text with its matched
// characters emphasised in a column textW wide, and its note.
func (m *Model) row(s *set, h hit, selected bool, textW, w int) string {
	text, hitSt, note := m.st.text, m.st.hit, m.st.note
	gutter := "  "
	if selected {
		text, hitSt, note = m.st.selText, m.st.selHit, m.st.selNote
		gutter = m.th.Glyphs.Cursor + " "
	}
	label := fit(m.label(s, h.entry), textW, m.th.Glyphs.Ellipsis)
	used := 2 + ansi.StringWidth(label)
	out := text.Render(gutter) + emphasise(label, h.at, text, hitSt)
	noteW := w - 2 - textW - 2
	if d := s.detail[h.entry]; d != "" && noteW > 0 {
		d = fit(d, noteW, m.th.Glyphs.Ellipsis)
		out += text.Render(strings.Repeat(" ", 2+textW+2-used)) + note.Render(d)
		used = 2 + textW + 2 + ansi.StringWidth(d)
	}
	if selected && used < w {
		out += text.Render(strings.Repeat(" ", w-used))
	}
	return out
}

// fit cuts plain text to w columns, the ellipsis last; a cut keeps a
// prefix of s, so match offsets stay valid.
func fit(s string, w int, ellipsis string) string {
	if ansi.StringWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, max(0, w-ansi.StringWidth(ellipsis)), "") + ellipsis
}

// emphasise renders s with the runes starting at the byte offsets at (in
// order) in hit and the rest in base; offsets past a cut are ignored.
func emphasise(s string, at []int, base, hit lipgloss.Style) string {
	var b strings.Builder
	start, on := 0, false
	for i := range s { // i steps over rune starts
		match := len(at) > 0 && at[0] == i
		if match {
			at = at[1:]
		}
		if i > 0 && match != on {
			b.WriteString(pick(on, base, hit).Render(s[start:i]))
			start = i
		}
		on = match
	}
	if start < len(s) {
		b.WriteString(pick(on, base, hit).Render(s[start:]))
	}
	return b.String()
}

func pick(on bool, base, hit lipgloss.Style) lipgloss.Style {
	if on {
		return hit
	}
	return base
}

// Hint is the footer while the palette shows.
func (m *Model) Hint() string {
	return "tab completes · enter runs · up/down select (history on an empty line) · esc cancels"
}

// Result reports the command run, or the cancellation. Values hold
// "command" (its name), "args" (the arguments joined by spaces, for a
// log line), "line" (as typed) and each argument under "arg0", "arg1", …
// (exact, spaces and all); Invocation reads them back.
func (m *Model) Result() (screen.Result, bool) {
	if !m.ok {
		return screen.Result{}, m.done
	}
	v := map[string]string{"command": m.cmd.Name, "args": strings.Join(m.args, " "), "line": m.line}
	for i, a := range m.args {
		v["arg"+strconv.Itoa(i)] = a
	}
	return screen.Result{OK: true, Values: v}, true
}

// Invocation is the command and arguments of a palette's Result; false
// for a cancelled palette or a result that is not one.
func Invocation(r screen.Result) (Command, []string, bool) {
	if !r.OK {
		return Command{}, nil, false
	}
	c, ok := Lookup(r.Values["command"])
	if !ok {
		return Command{}, nil, false
	}
	var args []string
	for i := 0; ; i++ {
		a, ok := r.Values["arg"+strconv.Itoa(i)]
		if !ok {
			return c, args, true
		}
		args = append(args, a)
	}
}
