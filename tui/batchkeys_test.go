package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// Keys that arrive in one read come as one message of several runes; each
// must act as if typed apart, and the first may send the rest elsewhere.
func TestKeysInOneRead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, name := range []string{"alpha", "bravo", "charlie"} {
		h.b.World.AddWorkspace(name, cairn.VolumeNone, "")
	}
	h.size(120, 40).hello()
	require.Contains(t, h.view(), "▸ alpha")
	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("jj")})
	require.Contains(t, h.view(), "▸ charlie", "both j moved the cursor")

	h.send(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("/bra")})
	require.Contains(t, h.header(), "/bra 1 of 3", "/ opened the filter, which took the rest as text")
}
