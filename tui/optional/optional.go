// Package optional reads the domain's optional fields (a description, an
// actor, a link target: a *string that is nil when absent; a workspace's
// lifecycle: its expiry, ttl, idle bound and archive) the way cairn-tui
// shows them.
package optional

import "strings"

// String is *p, or "" when p is nil.
func String(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// FirstLine is the first line of *p, or "" when p is nil: a description
// as a list row shows it.
func FirstLine(p *string) string {
	line, _, _ := strings.Cut(String(p), "\n")
	return line
}
