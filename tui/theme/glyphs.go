// Package theme holds the glyph sets and the styles of cairn-tui, built once
// at start. Every meaning has a glyph and a word, so nothing depends on
// colour.
package theme

import "github.com/charmbracelet/bubbles/spinner"

// Glyphs is one glyph set: unicode (default) or ascii.
type Glyphs struct {
	Cursor, Changed, Hit string
	Mark                 string // a marked row (bulk actions)
	Ready, None          string
	Archived             string // a volume archived to a snapshot (NONE until set up)
	// Spinner is one of bubbles' frame sets; its FPS is unused: the frame
	// shown is the model's Frame(), which moves only on tick messages.
	Spinner               spinner.Spinner
	Recorded, Missing     string
	Live, Connecting      string
	Offline, Polling, Off string
	OK, Info, Warn, Error string
	Up, Down              string
	Sep, Ellipsis         string
	BarFull, BarEmpty     string
	VBar, Return, Dot     string
	Dash, Times           string
}

// Unicode returns the default glyph set.
func Unicode() Glyphs {
	return Glyphs{
		Cursor: "▸", Changed: "•", Hit: "»", Mark: "◆",
		Ready: "●", None: "○", Archived: "◇",
		Spinner:  spinner.MiniDot, // ⠋ ⠙ ⠹ ⠸ ⠼ ⠴ ⠦ ⠧ ⠇ ⠏
		Recorded: "✓", Missing: "!",
		Live: "●", Connecting: "◌", Offline: "✕", Polling: "◐", Off: "○",
		OK: "✓", Info: "i", Warn: "! warning:", Error: "✕ error:",
		Up: "↑", Down: "↓", Sep: "▸", Ellipsis: "…",
		BarFull: "█", BarEmpty: "░", VBar: "│", Return: "⏎", Dot: "·", Dash: "–", Times: "×",
	}
}

// ASCII returns the glyph set for terminals or locales without UTF-8.
func ASCII() Glyphs {
	return Glyphs{
		Cursor: ">", Changed: "*", Hit: ">>", Mark: "#",
		Ready: "*", None: "-", Archived: "=",
		Spinner:  spinner.Line, // | / - \
		Recorded: "+", Missing: "!",
		Live: "*", Connecting: "~", Offline: "x", Polling: "%", Off: "-",
		OK: "+", Info: "i", Warn: "! warning:", Error: "x error:",
		Up: "^", Down: "v", Sep: ">", Ellipsis: "~",
		BarFull: "#", BarEmpty: ".", VBar: "|", Return: `\n`, Dot: "|", Dash: "-", Times: "x",
	}
}

// Frame returns the spinner frame for step n (tests pin 0). The caller's
// clock picks n, not a spinner.TickMsg loop: nothing animates when idle, and
// a golden can name its frame.
func (g Glyphs) Frame(n int) string {
	if n < 0 {
		n = -n
	}
	return g.Spinner.Frames[n%len(g.Spinner.Frames)]
}
