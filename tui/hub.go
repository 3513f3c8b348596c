package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/store"
)

// onHub applies one coalesced batch: the feed takes the connection
// transitions and the events, the queue the progress samples and notes,
// the files watch its report, the snapshots screens the snapshot events,
// the toasts the lifecycle warnings (after the events: a workspace the
// batch deleted is not warned of); it re-arms the hub wait.
func (m *Model) onHub(b live.Batch) tea.Cmd {
	m.sh.now = b.At
	if b.Epoch != m.epoch {
		b.Events, b.Resync, b.Conn, b.Files, b.Warnings = nil, nil, nil, nil, nil // the previous context's
	}
	cmd := m.feed.Batch(b)
	if len(b.Progress) > 0 {
		m.xfer.Samples(b.Progress)
	}
	m.stack.Broadcast(screen.TimeMsg{})
	return tea.Batch(m.armHub(), cmd, m.xfer.Notes(b.Notes), m.onFiles(b.Files), m.snapshotEvents(b), m.lifecycleWarnings(b.Warnings))
}

// changed tells every screen on the stack about ch and raises the MISSING
// alerts.
func (m *Model) changed(ch store.Changes, o feed.Origin) tea.Cmd {
	m.ops.SettleFromEvents(m.sh.st, ch)
	if ch.Empty() {
		return nil
	}
	if len(ch.Added)+len(ch.Updated) > 0 {
		m.highlightUntil = m.sh.Now().Add(m.c.Config.Highlight)
	}
	return tea.Batch(m.stack.Broadcast(screen.DataMsg{Changes: ch}), m.notes.Alert(ch, o == feed.OriginResync))
}
