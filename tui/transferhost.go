package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// queueHost is the root's side of the transfer queue's Host.
type queueHost struct{ m *Model }

func (h queueHost) NextID() int    { return h.m.id() }
func (h queueHost) Now() time.Time { return h.m.sh.now }

func (h queueHost) Toast(level toast.Level, text string) tea.Cmd { return h.m.notes.Show(level, text) }

func (h queueHost) ErrorToast(sentence string, err error) tea.Cmd {
	return h.m.notes.Error(sentence, err)
}

func (h queueHost) PutArtifact(a *cairn.Artifact) tea.Cmd {
	return h.m.changed(h.m.sh.st.PutArtifact(a, h.m.sh.Now()), feed.OriginResync)
}

func (h queueHost) After(d time.Duration, msg func() tea.Msg) tea.Cmd { return h.m.c.After(d, msg) }

func (h queueHost) SetPending(id, word string, on bool) { h.m.ops.SetPending(id, word, on) }

// Changed re-lays the frame (the tray may have grown or shrunk) and tells
// the screens.
func (h queueHost) Changed() {
	m := h.m
	if rows := m.trayHeight(); rows != m.trayRows {
		m.trayRows = rows
		m.resize(m.width, m.height)
	}
	m.stack.Broadcast(screen.TransfersMsg{})
}

// trayHeight is the tray's rows in this window; none below the minimum.
func (m *Model) trayHeight() int {
	if m.tooSmall() {
		return 0
	}
	return m.xfer.TrayHeight(m.height)
}
