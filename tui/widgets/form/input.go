package form

import (
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/theme"
)

// Input is a one-line editor with a static cursor. (bubbles' textinput
// would pull a clipboard module this build does not carry, and blinks.)
type Input struct {
	value []rune
	pos   int
	Limit int // runes; 0 is no limit
	Width int // visible columns; 0 is no limit
}

// NewInput returns an input holding value with the cursor at its end.
func NewInput(value string, limit int) Input {
	in := Input{Limit: limit}
	in.SetValue(value)
	return in
}

// Value is the text.
func (in *Input) Value() string { return string(in.value) }

// SetValue replaces the text and puts the cursor at its end.
func (in *Input) SetValue(s string) {
	in.value = []rune(s)
	if in.Limit > 0 && len(in.value) > in.Limit {
		in.value = in.value[:in.Limit]
	}
	in.pos = len(in.value)
}

// Update edits on a key; it reports whether the text changed.
func (in *Input) Update(k tea.KeyMsg) bool {
	before := string(in.value)
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		in.insert(k.Runes)
	case tea.KeyBackspace:
		if in.pos > 0 {
			in.value = append(in.value[:in.pos-1], in.value[in.pos:]...)
			in.pos--
		}
	case tea.KeyDelete, tea.KeyCtrlD:
		if in.pos < len(in.value) {
			in.value = append(in.value[:in.pos], in.value[in.pos+1:]...)
		}
	default:
		in.move(k)
	}
	return before != string(in.value)
}

func (in *Input) move(k tea.KeyMsg) {
	switch k.Type {
	case tea.KeyLeft, tea.KeyCtrlB:
		in.pos = max(0, in.pos-1)
	case tea.KeyRight, tea.KeyCtrlF:
		in.pos = min(len(in.value), in.pos+1)
	case tea.KeyHome, tea.KeyCtrlA:
		in.pos = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		in.pos = len(in.value)
	case tea.KeyCtrlU:
		in.value, in.pos = in.value[in.pos:], 0
	case tea.KeyCtrlK:
		in.value = in.value[:in.pos]
	case tea.KeyCtrlW:
		in.deleteWord()
	}
}

func (in *Input) insert(rs []rune) {
	clean := make([]rune, 0, len(rs))
	for _, r := range rs {
		if r == '\n' || r == '\t' {
			r = ' '
		}
		if unicode.IsPrint(r) {
			clean = append(clean, r)
		}
	}
	if in.Limit > 0 {
		clean = clean[:max(0, min(len(clean), in.Limit-len(in.value)))]
	}
	in.value = append(in.value[:in.pos], append(clean, in.value[in.pos:]...)...)
	in.pos += len(clean)
}

func (in *Input) deleteWord() {
	i := in.pos
	for i > 0 && in.value[i-1] == ' ' {
		i--
	}
	for i > 0 && in.value[i-1] != ' ' {
		i--
	}
	in.value = append(in.value[:i], in.value[in.pos:]...)
	in.pos = i
}

// View draws the text with the cursor as a reversed cell (an underscore
// before it without colour, where reverse video is off too) when focused,
// scrolled to keep the cursor in Width.
func (in *Input) View(th *theme.Theme, focused bool) string {
	text := string(in.value)
	if !focused {
		if in.Width > 0 && ansi.StringWidth(text) > in.Width {
			text = ansi.Truncate(text, in.Width, th.Glyphs.Ellipsis)
		}
		return text
	}
	start := 0
	if in.Width > 0 && in.pos >= in.Width {
		start = in.pos - in.Width + 1
	}
	before := string(in.value[start:in.pos])
	at, after := " ", ""
	if in.pos < len(in.value) {
		at, after = string(in.value[in.pos]), string(in.value[in.pos+1:])
	}
	cur := th.Cursor.Render(at)
	if th.Plain {
		cur = "_" + strings.TrimSpace(at)
	}
	out := before + cur + after
	if in.Width > 0 && ansi.StringWidth(out) > in.Width+1 {
		out = ansi.Truncate(out, in.Width+1, "")
	}
	return out
}
