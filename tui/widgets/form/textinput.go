package form

import (
	"strings"

	"github.com/charmbracelet/bubbles/cursor"
	"github.com/charmbracelet/bubbles/textinput"
	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn/tui/theme"
)

// NewTextInput returns a bubbles textinput holding value (at most limit
// runes; 0 is no limit) with the cursor at its end, in the theme's looks:
// no prompt (callers draw their own), and a static cursor, since nothing
// animates when idle. Without colour reverse video is gone too, so the
// cursor cell gets an underscore before it. Call Focus before giving it
// keys: a blurred textinput ignores them.
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
