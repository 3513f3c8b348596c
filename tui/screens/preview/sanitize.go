package preview

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cairn-dev/cairn/internal/termkit"
)

// Sanitize splits content into display lines that are safe to write to a
// terminal, as termkit.SanitizeLines makes them: ESC and every other C0
// control but tab and newline as a caret escape (^[, ^M), DEL as ^?, C1
// controls and bytes that are not UTF-8 as \x9b, bidi and line-separator
// controls as \u202e; tabs expand to stops of 4; CRLF ends a line like LF.
// esc styles each escape (the only SGR the result may hold is esc's own).
// plain is the same text unstyled and lower-cased, for search.
func Sanitize(content []byte, esc func(string) string) (lines, plain []string) {
	text := string(content)
	plain = termkit.SanitizeLines(text, nil)
	for i, l := range plain {
		plain[i] = strings.ToLower(l)
	}
	return termkit.SanitizeLines(text, esc), plain
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
