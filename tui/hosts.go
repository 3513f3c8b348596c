package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
)

// shellHost is the root's side of the shell hand-over's Host.
type shellHost struct{ m *Model }

func (h shellHost) NextID() int                  { return h.m.id() }
func (h shellHost) AddTask(id int, label string) { h.m.ops.AddTask(id, label) }
func (h shellHost) EndTask(id int)               { h.m.ops.EndTask(id) }

func (h shellHost) Toast(level common.Level, text string) tea.Cmd { return h.m.toast(level, text) }

func (h shellHost) ErrorToast(sentence string, err error) tea.Cmd {
	return h.m.errorToast(sentence, err)
}

// Returned is the way back from a shell: the window size, and a resync —
// the events of the meantime are in the hub, but a long shell may have
// overflowed it.
func (h shellHost) Returned() tea.Cmd { return tea.Batch(tea.WindowSize(), h.m.startResync()) }
