package form

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/tui/theme"
)

// NewTextInput returns a bubbles textinput holding value (at most limit
// runes; 0 is no limit) with the cursor at its end, in the theme's looks:
// no prompt (callers draw their own), and a static cursor, since nothing
// animates when idle (TUI.md §0). Without colour reverse video is gone
// too, so the cursor cell gets an underscore before it. Call Focus before
// giving it keys: a blurred textinput ignores them.
func NewTextInput(th *theme.Theme, value string, limit int) textinput.Model {
	in := textinput.New()
	in.Prompt = ""
	in.CharLimit = limit
	// A terminal's paste arrives as keys (bracketed paste) and works; ctrl+v
	// would read the clipboard in a Cmd whose answer the root hands to the
	// screen, not to a modal's field.
	in.KeyMap.Paste.SetEnabled(false)
	in.Cursor.SetMode(cursor.CursorStatic)
	in.Cursor.Style = cursorStyle(th)
	SetText(&in, value)
	return in
}

// cursorStyle is reverse video, or without colour an underscore.
func cursorStyle(th *theme.Theme) lipgloss.Style {
	if th.Plain {
		return th.Cursor.Transform(func(s string) string { return "_" + strings.TrimSpace(s) })
	}
	return th.Cursor
}

// SetText replaces the text of in and puts the cursor at its end, as a
// completion or a derived name does (textinput's SetValue keeps the cursor
// where it was).
func SetText(in *textinput.Model, s string) {
	in.SetValue(s)
	in.CursorEnd()
}

// Input keeps the API of the hand-written editor this package had, over a
// bubbles textinput, for the callers not yet on NewTextInput (the list
// filter of screens/pane).
//
// Deprecated: use NewTextInput and textinput.Model.
type Input struct {
	Limit int // runes; 0 is no limit
	Width int // visible columns; 0 is no limit
	model textinput.Model
}

// NewInput returns an input holding value with the cursor at its end.
//
// Deprecated: use NewTextInput.
func NewInput(value string, limit int) Input {
	in := Input{Limit: limit, model: textinput.New()}
	in.model.Prompt = ""
	in.model.CharLimit = limit
	in.model.KeyMap.Paste.SetEnabled(false)
	in.model.Cursor.SetMode(cursor.CursorStatic)
	in.model.Focus()
	SetText(&in.model, value)
	return in
}

// Value is the text.
func (in *Input) Value() string { return in.model.Value() }

// SetValue replaces the text and puts the cursor at its end.
func (in *Input) SetValue(s string) {
	in.model.CharLimit = in.Limit
	SetText(&in.model, s)
}

// Update edits on a key; it reports whether the text changed.
func (in *Input) Update(k tea.KeyMsg) bool {
	before := in.model.Value()
	in.model.CharLimit, in.model.Width = in.Limit, in.Width
	in.model, _ = in.model.Update(k)
	return in.model.Value() != before
}

// View draws the text: with the cursor when focused, else cut to Width.
func (in *Input) View(th *theme.Theme, focused bool) string {
	if !focused {
		text := in.model.Value()
		if in.Width > 0 && ansi.StringWidth(text) > in.Width {
			text = ansi.Truncate(text, in.Width, th.Glyphs.Ellipsis)
		}
		return text
	}
	m := in.model
	m.Width = in.Width
	m.Cursor.Style = cursorStyle(th)
	return m.View()
}
