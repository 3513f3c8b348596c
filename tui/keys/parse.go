package keys

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// refusedError marks a key a terminal sends identically to another one.
type refusedError struct{ key, same string }

func (e refusedError) Error() string {
	return fmt.Sprintf("key %q cannot be told apart from %q by a terminal", e.key, e.same)
}

// indistinct maps chords that terminals send as another key.
func indistinct(k string) (string, bool) {
	switch k {
	case "ctrl+i":
		return "tab", true
	case "ctrl+m":
		return "enter", true
	case "ctrl+[":
		return "esc", true
	case "ctrl+h":
		return "backspace", true
	}
	return "", false
}

func namedKey(k string) bool {
	switch k {
	case "enter", "esc", "tab", "shift+tab", "backspace", "delete", "insert",
		"up", "down", "left", "right", "home", "end", "pgup", "pgdown", " ":
		return true
	}
	if strings.HasPrefix(k, "f") && len(k) <= 3 && len(k) > 1 && strings.Trim(k[1:], "0123456789") == "" {
		return true
	}
	return false
}

// parseKey normalises one key name as Bubble Tea prints it ("space" is " ").
func parseKey(raw string) (string, error) {
	k := strings.TrimSpace(raw)
	if raw == " " || strings.EqualFold(k, "space") {
		return " ", nil
	}
	if k == "" {
		return "", errors.New("empty key")
	}
	if same, bad := indistinct(strings.ToLower(k)); bad {
		return "", refusedError{key: k, same: same}
	}
	if utf8.RuneCountInString(k) == 1 || namedKey(strings.ToLower(k)) {
		if utf8.RuneCountInString(k) == 1 {
			return k, nil
		}
		return strings.ToLower(k), nil
	}
	for _, mod := range []string{"ctrl+", "alt+"} {
		if rest, ok := strings.CutPrefix(strings.ToLower(k), mod); ok {
			if utf8.RuneCountInString(rest) == 1 || namedKey(rest) {
				return mod + rest, nil
			}
		}
	}
	return "", fmt.Errorf("unknown key %q", raw)
}

func parseKeys(raw []string) ([]string, error) {
	if len(raw) == 0 {
		return nil, errors.New("no keys given")
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		k, err := parseKey(r)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// Display renders a key name for people.
func Display(k string) string {
	if k == " " {
		return "space"
	}
	return k
}
