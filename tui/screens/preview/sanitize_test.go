package preview_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/screens/preview"
)

func bracket(s string) string { return "[" + s + "]" }

func TestSanitize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"Plain", "hello\nworld\n", []string{"hello", "world"}},
		{"Empty", "", []string{""}},
		{"CRLF", "a\r\nb", []string{"a", "b"}},
		{"LoneCR", "a\rb", []string{"a[^M]b"}},
		{"Tabs", "\tx\tyz\tq", []string{"    x   yz  q"}},
		{"ESCAndCSI", "\x1b[31mred\x1b[0m", []string{"[^[][31mred[^[][0m"}},
		{"OSC", "\x1b]52;c;aGk=\x07", []string{"[^[]]52;c;aGk=[^G]"}},
		{"C0AndDEL", "\x00\x01\x7f", []string{"[^@][^A][^?]"}},
		{"C1", "a\u009bb\u0085", []string{`a[\x9b]b[\x85]`}},
		{"InvalidUTF8", "a\x9bb\xff", []string{`a[\x9b]b[\xff]`}},
		{"Bidi", "x\u202eevil\u2066\u200f", []string{`x[\u202e]evil[\u2066][\u200f]`}},
		{"LineSeparator", "a\u2028b", []string{`a[\u2028]b`}},
		{"WideRunes", "日本\tz", []string{"日本    z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			lines, plain := preview.Sanitize([]byte(c.in), bracket)
			require.Equal(t, c.want, lines)
			for _, l := range lines {
				require.NotContains(t, l, "\x1b", "no ESC reaches the terminal")
				require.NotContains(t, l, "\u009b")
				require.NotContains(t, l, "\u202e")
			}
			require.Len(t, plain, len(lines))
		})
	}
	_, plain := preview.Sanitize([]byte("Hello\x1bWorld"), bracket)
	require.Equal(t, []string{"hello^[world"}, plain, "search reads the escapes unstyled, lower-cased")
}

func TestBinary(t *testing.T) {
	t.Parallel()
	require.False(t, preview.Binary([]byte("plain text\n")))
	require.True(t, preview.Binary([]byte("has a \x00 byte")))
	require.True(t, preview.Binary([]byte{0xff, 0xfe, 'a', 0xfd, 'b', 'c'}), "over 10 % invalid")
	require.False(t, preview.Binary([]byte("mostly text but one \xff byte in a long enough line of words")))
	require.False(t, preview.Binary([]byte("cut at the end: 日")[:len("cut at the end: 日")-1]), "an incomplete last rune is not invalid")
}

func TestHexDump(t *testing.T) {
	t.Parallel()
	lines := preview.HexDump([]byte("PK\x03\x04 hello, zip!\x00\x01"))
	require.Equal(t, []string{
		"00000000  50 4b 03 04 20 68 65 6c  6c 6f 2c 20 7a 69 70 21  |PK.. hello, zip!|",
		"00000010  00 01                                             |..|",
	}, lines)
	require.Empty(t, preview.HexDump(nil))
	require.Equal(t, 16, len(preview.HexDump([]byte(strings.Repeat("x", 256)))))
}
