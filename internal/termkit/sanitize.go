package termkit

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// TabWidth is the tab stop of sanitised text.
const TabWidth = 4

// Sanitize makes untrusted text (a name, a description, a MIME type, an
// error detail) safe to write to a terminal on one line, for a table cell
// or a field. ESC and every other C0 control show in caret notation (^[,
// ^G), line breaks included (^J, ^M); DEL as ^?; C1 controls and bytes
// that are not UTF-8 as \x9b; the bidi and line-separator controls that
// can reorder what follows (Trojan Source) as \u202e. Tabs expand to stops
// of TabWidth columns. Everything else, wide runes included, is kept.
func Sanitize(s string) string {
	z := sanitizer{}
	z.run(s, false)
	return z.b.String()
}

// SanitizeLines is Sanitize for multi-line text (the preview, a
// description): it keeps the line breaks, splitting s at each LF or CRLF
// (a lone CR shows as ^M), and starts each line's tab stops afresh. A
// final line break ends the last line rather than starting an empty one;
// empty text is one empty line. esc, when not nil, styles each visible
// escape (so the only SGR the result holds is esc's own).
func SanitizeLines(s string, esc func(string) string) []string {
	z := sanitizer{esc: esc}
	z.run(s, true)
	if z.b.Len() > 0 || len(z.lines) == 0 {
		z.flush()
	}
	return z.lines
}

// sanitizer builds sanitised lines, tracking the column for tab stops.
type sanitizer struct {
	esc   func(string) string
	lines []string
	b     strings.Builder
	col   int
}

func (z *sanitizer) run(s string, keepLines bool) {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f { // printable ASCII: most text
			z.b.WriteByte(c)
			z.col++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case keepLines && r == '\n':
			z.flush()
		case keepLines && r == '\r' && strings.HasPrefix(s[i+1:], "\n"):
			// CRLF: the LF ends the line.
		case r == '\t':
			n := TabWidth - z.col%TabWidth
			z.b.WriteString(strings.Repeat(" ", n))
			z.col += n
		default:
			z.rune(r, s[i:i+size])
		}
		i += size
	}
}

// rune writes one rune, raw or as its visible escape.
func (z *sanitizer) rune(r rune, raw string) {
	e := escape(r, raw)
	switch {
	case e == "":
		z.b.WriteString(raw)
		z.col += runewidth.RuneWidth(r)
		return
	case z.esc != nil:
		z.b.WriteString(z.esc(e))
	default:
		z.b.WriteString(e)
	}
	z.col += len(e)
}

func (z *sanitizer) flush() {
	z.lines = append(z.lines, z.b.String())
	z.b.Reset()
	z.col = 0
}

// escape is the visible form of a rune that must not reach a terminal as
// it is, or "" for one that may. raw is its encoding in the input.
func escape(r rune, raw string) string {
	switch {
	case r == utf8.RuneError && len(raw) <= 1:
		return fmt.Sprintf(`\x%02x`, raw[0])
	case r < 0x20:
		return "^" + string(r+'@')
	case r == 0x7f:
		return "^?"
	case r >= 0x80 && r <= 0x9f:
		return fmt.Sprintf(`\x%02x`, r)
	case formatControl(r):
		return fmt.Sprintf(`\u%04x`, r)
	}
	return ""
}

// formatControl reports the bidi embedding, override and isolate controls,
// the directional marks, and the line and paragraph separators: invisible,
// and able to reorder or break what follows.
func formatControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
