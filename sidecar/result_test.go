package sidecar

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLastObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		output string
		want   string
		found  bool
	}{
		{"OK", "\n{\"ok\":true}\n", `{"ok":true}`, true},
		{"TTYLineEndings", "noise\r\n{\"ok\":false}\r\n", `{"ok":false}`, true},
		{"LastWins", "{\"a\":1}\n{\"b\":2}\n", `{"b":2}`, true},
		{"SkipsScalarsAndArrays", "{\"a\":1}\n[1,2]\n\"s\"\n42\n", `{"a":1}`, true},
		{"StripsANSI", "\x1b[32m{\"ok\":true}\x1b[0m\n", `{"ok":true}`, true},
		{"SkipsBrokenJSON", "{\"a\":1}\n{\"b\":\n", `{"a":1}`, true},
		{"ErrNone", "panic: boom\n", "", false},
		{"ErrEmpty", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := LastObject([]byte(tt.output))
			require.Equal(t, tt.found, ok)
			require.Equal(t, tt.want, string(got))
		})
	}
}

func TestParseResult(t *testing.T) {
	t.Parallel()
	r, ok := ParseResult([]byte(`{"ok":false,"error":"no","reason":"prep_failed","http_status":503}`))
	require.True(t, ok)
	require.False(t, r.OK)
	require.Equal(t, "no", r.ErrorText())
	require.Equal(t, "prep_failed", r.ReasonText())
	require.Equal(t, 503, *r.HTTPStatus)

	_, ok = ParseResult([]byte(`{"ok":"yes"}`))
	require.False(t, ok, "a wrongly typed verdict is not a result")
}

func TestRedact(t *testing.T) {
	t.Parallel()
	url := "http://127.0.0.1:7070/b/k?X-Amz-Signature=abc"
	require.Equal(t, "GET [REDACTED] failed", Redact("  GET "+url+" failed\n", url))
	require.Equal(t, "x", Redact("x", ""), "an empty secret redacts nothing")

	long := Redact(strings.Repeat("a", 3000))
	require.Len(t, long, MaxQuotedOutput+len("... (truncated)"))
	require.True(t, strings.HasSuffix(long, "... (truncated)"))
}

func FuzzLastObject(f *testing.F) {
	for _, seed := range []string{
		"\n{\"ok\":true}\n", "{\"a\":1}\r\n[1]\n", "\x1b[1m{}\x1b[0m", "", "{", "{\"ok\":true,\"error\":null}\n42",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, output []byte) {
		line, ok := LastObject(output)
		if !ok {
			require.Nil(t, line)
			return
		}
		require.True(t, strings.HasPrefix(string(line), "{"), "a result line is an object")
		require.NotContains(t, string(line), "\n")
		_, _ = ParseResult(output)
	})
}
