package common

import (
	"strings"
)

// FirstLine is a description's first line.
func FirstLine(p *string) string {
	if p == nil {
		return ""
	}
	line, _, _ := strings.Cut(*p, "\n")
	return line
}

// Deref is a description or "".
func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
