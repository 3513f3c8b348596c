package termkit_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
)

func bracket(s string) string { return "[" + s + "]" }

func TestSanitize(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in, want string
	}{
		{"Plain", "report_csv", "report_csv"},
		{"Empty", "", ""},
		{"ESCAndCSI", "a\x1b[31mred\x07", "a^[[31mred^G"},
		{"OSC", "\x1b]52;c;aGk=\x07", "^[]52;c;aGk=^G"},
		{"LineBreaksShown", "two\nlines\r\n", "two^Jlines^M^J"},
		{"C0AndDEL", "\x00\x01\x7f", "^@^A^?"},
		{"C1", "a\u009bb\u0085", `a\x9bb\x85`},
		{"InvalidUTF8", "a\x9bb\xff", `a\x9bb\xff`},
		{"Bidi", "x\u202eevil\u2066\u200f", `x\u202eevil\u2066\u200f`},
		{"LineSeparator", "a\u2028b\u2029", `a\u2028b\u2029`},
		{"Tabs", "\tx\tyz\tq", "    x   yz  q"},
		{"TabAfterEscape", "\x1b\tx", "^[  x"},
		{"WideRunes", "日本\tz", "日本    z"},
		{"ReplacementCharKept", "a\uFFFDb", "a\uFFFDb"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, termkit.Sanitize(c.in))
		})
	}
}

func TestSanitizeLines(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		in   string
		esc  func(string) string
		want []string
	}{
		{"Plain", "hello\nworld\n", nil, []string{"hello", "world"}},
		{"Empty", "", nil, []string{""}},
		{"OnlyNewline", "\n", nil, []string{""}},
		{"BlankLineKept", "a\n\nb", nil, []string{"a", "", "b"}},
		{"CRLF", "a\r\nb", nil, []string{"a", "b"}},
		{"LoneCR", "a\rb", bracket, []string{"a[^M]b"}},
		{"TabStopsPerLine", "ab\tc\n\tx\tyz\tq", nil, []string{"ab  c", "    x   yz  q"}},
		{"ESCAndCSI", "\x1b[31mred\x1b[0m", bracket, []string{"[^[][31mred[^[][0m"}},
		{"OSC", "\x1b]52;c;aGk=\x07", bracket, []string{"[^[]]52;c;aGk=[^G]"}},
		{"C0AndDEL", "\x00\x01\x7f", bracket, []string{"[^@][^A][^?]"}},
		{"C1", "a\u009bb\u0085", bracket, []string{`a[\x9b]b[\x85]`}},
		{"InvalidUTF8", "a\x9bb\xff", bracket, []string{`a[\x9b]b[\xff]`}},
		{"Bidi", "x\u202eevil\u2066\u200f", bracket, []string{`x[\u202e]evil[\u2066][\u200f]`}},
		{"LineSeparator", "a\u2028b", bracket, []string{`a[\u2028]b`}},
		{"WideRunes", "日本\tz", nil, []string{"日本    z"}},
		{"EscapeWidthCountsForTabs", "\x1b\tz", bracket, []string{"[^[]  z"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, termkit.SanitizeLines(c.in, c.esc))
		})
	}
}

// FuzzSanitize checks the guarantees on any input: valid UTF-8 out, no
// control (C0, DEL, C1) and no bidi or separator control left, no line
// break from Sanitize, and safe text unchanged.
func FuzzSanitize(f *testing.F) {
	for _, seed := range []string{"", "plain", "\x1b[2J\x1b]0;title\x07", "a\r\nb\n", "\t\x00\x7f\u009b\xff", "x\u202e\u2066y", "日本\t語"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		one := termkit.Sanitize(s)
		requireSafe(t, one)
		require.NotContains(t, one, "\n")
		lines := termkit.SanitizeLines(s, nil)
		require.NotEmpty(t, lines)
		for _, l := range lines {
			requireSafe(t, l)
			require.NotContains(t, l, "\n")
		}
		require.LessOrEqual(t, len(lines), strings.Count(s, "\n")+1)
		if safe(s) {
			require.Equal(t, s, one, "safe text is kept")
		}
	})
}

func requireSafe(t *testing.T, s string) {
	t.Helper()
	require.True(t, utf8.ValidString(s), "%q", s)
	for _, r := range s {
		require.False(t, r < 0x20 && r != '\n', "%q holds %U", s, r)
		require.False(t, r >= 0x7f && r <= 0x9f, "%q holds %U", s, r)
		require.False(t, r == 0x061c || r == 0x200e || r == 0x200f || r == 0x2028 || r == 0x2029 ||
			(r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069), "%q holds %U", s, r)
	}
}

// safe reports printable ASCII: what Sanitize must pass through unchanged.
func safe(s string) bool {
	for i := range len(s) {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// BenchmarkSanitizeLines is the preview's worst case: its 256 KiB sample.
func BenchmarkSanitizeLines(b *testing.B) {
	text := strings.Repeat("col\tvalue \x1b[1mbold\x1b[0m 日本 ok\n", 256<<10/40)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		termkit.SanitizeLines(text, bracket)
	}
}
