package sidecar

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
)

// MaxQuotedOutput bounds how much raw sidecar output is quoted back in an
// error detail.
const MaxQuotedOutput = 2048

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07`)

// LastObject finds the result line in a sidecar's combined output: the last
// line that decodes as a JSON object, after trimming whitespace (a TTY turns
// "\n" into "\r\n") and stripping ANSI escapes. Scalars, strings and arrays
// are skipped. It reports false when no line qualifies.
func LastObject(output []byte) (json.RawMessage, bool) {
	lines := bytes.Split(output, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		line := bytes.TrimSpace(ansiEscape.ReplaceAll(lines[i], nil))
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(line, &obj) == nil {
			return json.RawMessage(line), true
		}
	}
	return nil, false
}

// ParseResult decodes the result line of prep, upload or download.
func ParseResult(output []byte) (Result, bool) {
	var r Result
	line, ok := LastObject(output)
	if !ok || json.Unmarshal(line, &r) != nil {
		return Result{}, false
	}
	return r, true
}

// Redact replaces every occurrence of each secret in s with [REDACTED] and
// bounds the result to MaxQuotedOutput bytes, so that sidecar output can be
// quoted to a client without leaking a presigned URL.
func Redact(s string, secrets ...string) string {
	for _, secret := range secrets {
		if secret != "" {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	s = strings.TrimSpace(s)
	if len(s) > MaxQuotedOutput {
		s = s[:MaxQuotedOutput] + "... (truncated)"
	}
	return s
}
