package preview

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mattn/go-runewidth"
)

// tabWidth is the tab stop of the preview.
const tabWidth = 4

// Sanitize splits content into display lines that are safe to write to a
// terminal: ESC and every other C0 control but tab and newline show as a
// caret escape (^[, ^M), DEL as ^?, C1 controls and bytes that are not
// UTF-8 as \x9b, bidi and line-separator controls as \u202e; tabs expand
// to stops of 4; CRLF ends a line like LF. esc styles each escape (the
// only SGR the result may hold is esc's own). plain is the same text
// unstyled and lower-cased, for search.
func Sanitize(content []byte, esc func(string) string) (lines, plain []string) {
	var line, low strings.Builder
	col := 0
	flush := func() {
		lines, plain = append(lines, line.String()), append(plain, strings.ToLower(low.String()))
		line.Reset()
		low.Reset()
		col = 0
	}
	emit := func(text string, escaped bool) {
		if escaped {
			line.WriteString(esc(text))
		} else {
			line.WriteString(text)
		}
		low.WriteString(text)
	}
	for i := 0; i < len(content); {
		r, size := utf8.DecodeRune(content[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			emit(fmt.Sprintf(`\x%02x`, content[i]), true)
			col += 4
		case r == '\n':
			flush()
		case r == '\r' && i+1 < len(content) && content[i+1] == '\n':
			// CRLF: the LF ends the line.
		case r == '\t':
			n := tabWidth - col%tabWidth
			emit(strings.Repeat(" ", n), false)
			col += n
		case r < 0x20 || r == 0x7f:
			emit(caret(r), true)
			col += 2
		case r >= 0x80 && r <= 0x9f:
			emit(fmt.Sprintf(`\x%02x`, r), true)
			col += 4
		case formatControl(r):
			emit(fmt.Sprintf(`\u%04x`, r), true)
			col += 6
		default:
			emit(string(r), false)
			col += runewidth.RuneWidth(r)
		}
		i += size
	}
	if line.Len() > 0 || len(lines) == 0 {
		flush()
	}
	return lines, plain
}

// caret is the caret notation of a C0 control or DEL: ^@ … ^_, ^?.
func caret(r rune) string {
	if r == 0x7f {
		return "^?"
	}
	return "^" + string(rune(r+'@'))
}

// formatControl reports the bidi embedding, override and isolate controls,
// the marks, and the line and paragraph separators: invisible, and able to
// reorder or break what follows (Trojan Source).
func formatControl(r rune) bool {
	switch {
	case r == 0x061c, r == 0x200e, r == 0x200f, r == 0x2028, r == 0x2029:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Binary reports a sample that is not text: a NUL byte, or more than 10 %
// of its bytes not UTF-8 (an incomplete rune cut at the sample's end does
// not count).
func Binary(sample []byte) bool {
	for p := len(sample) - 1; p >= 0 && p >= len(sample)-3; p-- {
		if utf8.RuneStart(sample[p]) {
			if !utf8.FullRune(sample[p:]) {
				sample = sample[:p]
			}
			break
		}
	}
	bad := 0
	for i := 0; i < len(sample); {
		if sample[i] == 0 {
			return true
		}
		r, size := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && size <= 1 {
			bad++
		}
		i += size
	}
	return bad*10 > len(sample)
}

// HexDump renders bytes as offset, 16 hex bytes and their printable ASCII.
func HexDump(b []byte) []string {
	var out []string
	for off := 0; off < len(b); off += 16 {
		row := b[off:min(len(b), off+16)]
		var hex, text strings.Builder
		for i := range 16 {
			if i == 8 {
				hex.WriteByte(' ')
			}
			if i < len(row) {
				fmt.Fprintf(&hex, "%02x ", row[i])
			} else {
				hex.WriteString("   ")
			}
		}
		for _, c := range row {
			if c >= 0x20 && c < 0x7f {
				text.WriteByte(c)
			} else {
				text.WriteByte('.')
			}
		}
		out = append(out, fmt.Sprintf("%08x  %s |%s|", off, hex.String(), text.String()))
	}
	return out
}
