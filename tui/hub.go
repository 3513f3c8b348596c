package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/feed"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/store"
)

// onHub applies one coalesced batch: the feed takes the connection
// transitions and the events, the queue the progress samples; it re-arms
// the hub wait.
func (m *Model) onHub(b live.Batch) tea.Cmd {
	m.sh.now = b.At
	cmd := m.feed.Batch(b)
	if len(b.Progress) > 0 {
		m.xfer.Samples(b.Progress)
	}
	m.timeMoved()
	return tea.Batch(m.armHub(), cmd)
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
	cmds := make([]tea.Cmd, 0, len(m.stack)+1)
	for i, s := range m.stack {
		next, cmd := s.Update(common.DataMsg{Changes: ch})
		m.stack[i] = next
		cmds = append(cmds, cmd)
	}
	return tea.Batch(append(cmds, m.notes.Alert(ch, o == feed.OriginResync))...)
}

// timeMoved tells screens the clock moved (ages, highlights, spinners).
func (m *Model) timeMoved() {
	for i, s := range m.stack {
		m.stack[i], _ = s.Update(common.TimeMsg{})
	}
}

// visibleScopes are the scopes of every screen on the stack.
func (m *Model) visibleScopes() []store.Scope {
	var out []store.Scope
	for _, s := range m.stack {
		out = append(out, s.Scopes()...)
	}
	return out
}
