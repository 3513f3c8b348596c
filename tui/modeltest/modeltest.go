// Package modeltest drives cairn-tui's Bubble Tea models in tests without
// a program: keys by the names the key registry uses (Key, Press, Type),
// the messages a Cmd delivers (Msg, Msgs), and the figures of the timing
// budgets (Percentiles, KeyMix, Millis), and the theme views are read in
// (Theme).
package modeltest

import (
	"slices"
	"strings"
	"sync"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/theme"
)

// keyTypes is every named key type by its name ("enter", "ctrl+d",
// "pgdown"), as tea.KeyType's String spells it: the names a KeyMsg's
// String gives and the key registry binds.
var keyTypes = sync.OnceValue(func() map[string]tea.KeyType {
	out := make(map[string]tea.KeyType)
	for k := tea.KeyType(-256); k <= 127; k++ {
		if name := k.String(); name != "" && k != tea.KeyRunes {
			out[name] = k
		}
	}
	return out
})

// Key is the tea.KeyMsg a terminal sends for the key named k: a named key
// ("enter", "esc", "shift+tab", "ctrl+]", " " for space), with "alt+"
// before it for Alt, or else the runes of k ("j", "G", "/").
func Key(k string) tea.KeyMsg {
	alt := false
	if rest, ok := strings.CutPrefix(k, "alt+"); ok && rest != "" {
		alt, k = true, rest
	}
	t, named := keyTypes()[k]
	switch {
	case t == tea.KeySpace:
		return tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}, Alt: alt}
	case named:
		return tea.KeyMsg{Type: t, Alt: alt}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k), Alt: alt}
}

// Press sends the keys named to update, one after the other, and returns
// the Cmds it returned as one (nil when it returned none).
func Press[M any](update func(tea.Msg) (M, tea.Cmd), keys ...string) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(keys))
	for _, k := range keys {
		_, cmd := update(Key(k))
		cmds = append(cmds, cmd)
	}
	return tea.Batch(cmds...)
}

// Type sends each rune of text to update as its own key, as a terminal
// does, and returns the Cmds it returned as one.
func Type[M any](update func(tea.Msg) (M, tea.Cmd), text string) tea.Cmd {
	var keys []string
	for _, r := range text {
		keys = append(keys, string(r))
	}
	return Press(update, keys...)
}

// Msg runs cmd and returns its message; nil for a nil cmd.
func Msg(cmd tea.Cmd) tea.Msg {
	if cmd == nil {
		return nil
	}
	return cmd()
}

// Msgs runs cmd and every Cmd of the batches it returns, depth first,
// and returns their messages in that order, leaving out nil ones.
func Msgs(cmd tea.Cmd) []tea.Msg {
	switch msg := Msg(cmd).(type) {
	case nil:
		return nil
	case tea.BatchMsg:
		var out []tea.Msg
		for _, c := range msg {
			out = append(out, Msgs(c)...)
		}
		return out
	default:
		return []tea.Msg{msg}
	}
}

// Percentiles returns the median and the 99th percentile of d.
func Percentiles(d []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2], s[min(len(s)-1, len(s)*99/100)]
}

// Millis is d in milliseconds, as a benchmark reports it.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// KeyMix is the key presses the keypress budgets time over 10 000 rows:
// moving, sorting, and a filter typed and cleared.
func KeyMix() []tea.KeyMsg {
	var out []tea.KeyMsg
	for _, k := range []string{"j", "j", "k", "ctrl+d", "G", "g", "o", "/", "4", "2", "j", "backspace", "enter", "esc"} {
		out = append(out, Key(k))
	}
	return out
}

// Theme is the theme a view test draws with: dark, unicode glyphs, and
// plain (no colour), so that a view reads as text.
func Theme() *theme.Theme {
	th := theme.New("dark", theme.Unicode())
	th.Plain = true
	return th
}
