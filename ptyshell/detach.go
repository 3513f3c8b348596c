package ptyshell

import (
	"fmt"
	"strings"
)

// DefaultDetachKey is the client's detach key when none is configured:
// Ctrl-] (0x1d), as telnet's.
const DefaultDetachKey = "ctrl-]"

// DetachNone disables the detach key.
const DetachNone = "none"

// ParseDetachKey parses a detach key as `cairn shell --detach-key` and the
// TUI config (tui.shell.abandon_key, written like its other keys) spell
// it: "ctrl-" or "ctrl+" followed by a letter or one of @ [ \ ] ^ _,
// case-insensitive; "none" disables it (enabled false); "" means
// DefaultDetachKey. It returns the byte the key sends.
func ParseDetachKey(s string) (key byte, enabled bool, err error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "":
		s = DefaultDetachKey
	case DetachNone:
		return 0, false, nil
	}
	rest, ok := strings.CutPrefix(s, "ctrl-")
	if !ok {
		rest, ok = strings.CutPrefix(s, "ctrl+")
	}
	if !ok || len(rest) != 1 {
		return 0, false, fmt.Errorf("detach key %q: want ctrl-<key> or %q", s, DetachNone)
	}
	c := rest[0]
	switch {
	case c >= 'a' && c <= 'z':
		return c - 'a' + 1, true, nil
	case c == '@' || (c >= '[' && c <= '_'):
		return c - '@', true, nil
	}
	return 0, false, fmt.Errorf("detach key %q: ctrl-%c sends no control byte", s, c)
}

// detachKeyName renders a control byte as "Ctrl-]".
func detachKeyName(b byte) string { return "Ctrl-" + string(rune(b+'@')) }
