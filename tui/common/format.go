package common

import (
	"strings"
	"time"

	"github.com/cairn-dev/cairn/internal/termkit"
)

// Age renders how long ago t was: now, 12m, 3h, 5d, 2y.
//
// Deprecated: use termkit.Age.
func Age(now, t time.Time) string { return termkit.Age(now, t) }

// IEC renders a size: 512 B, 14.0 KiB, 3.2 MiB.
//
// Deprecated: use termkit.Size.
func IEC(n int64) string { return termkit.Size(n) }

// Count renders a number with a space every three digits: 1 204.
//
// Deprecated: use termkit.Count.
func Count(n int64) string { return termkit.Count(n) }

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

// ShortID cuts a long ID for narrow places: 4f3c2a1e-9b….
func ShortID(id string, n int, ellipsis string) string {
	if len(id) <= n {
		return id
	}
	return id[:n] + ellipsis
}
