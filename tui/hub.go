package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/store"
)

// onHub applies one coalesced batch: connection transitions, then the
// merged events as one store update, then resync if asked; it re-arms the
// hub wait.
func (m *Model) onHub(b live.Batch) tea.Cmd {
	m.sh.now = b.At
	cmds := []tea.Cmd{m.armHub()}
	for _, c := range b.Conn {
		cmds = append(cmds, m.onConn(c))
	}
	if len(b.Events) > 0 {
		m.conn.lastGood = b.At
		ch := m.sh.st.Apply(b.Events, m.sh.Now())
		m.ops.SettleFromEvents(m.sh.st, ch)
		cmds = append(cmds, m.changed(ch, originPoll))
		if m.touches(ch, m.selected) {
			cmds = append(cmds, m.inspect(m.selected))
		}
		for _, sc := range ch.Relist {
			cmds = append(cmds, m.startList(sc, originResync))
		}
	}
	if len(b.Progress) > 0 {
		m.xfer.Samples(b.Progress)
	}
	if len(b.Resync) > 0 && m.listed {
		cmds = append(cmds, m.startResync())
	}
	m.checkOffline()
	m.timeMoved()
	return tea.Batch(cmds...)
}

func (m *Model) touches(ch store.Changes, wsID string) bool {
	if wsID == "" {
		return false
	}
	for _, r := range append(ch.Added, ch.Updated...) {
		if r.Kind == store.KindWorkspace && r.ID == wsID {
			return true
		}
	}
	return false
}

// changed tells every screen on the stack about ch and raises the MISSING
// alerts.
func (m *Model) changed(ch store.Changes, o origin) tea.Cmd {
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
	return tea.Batch(append(cmds, m.alert(ch, o))...)
}

// timeMoved tells screens the clock moved (ages, highlights, spinners).
func (m *Model) timeMoved() {
	for i, s := range m.stack {
		m.stack[i], _ = s.Update(common.TimeMsg{})
	}
}

// resyncState tracks one resync: its scopes in flight and one "again".
type resyncState struct {
	running map[store.Scope]bool
	again   bool
}

// startResync re-lists every visible and cached scope and re-fetches the
// selected workspace; a trigger during a resync runs it once more after.
func (m *Model) startResync() tea.Cmd {
	if !m.listed {
		return m.startFirstList()
	}
	if len(m.resync.running) > 0 {
		m.resync.again = true
		return nil
	}
	m.resync.running = make(map[store.Scope]bool)
	scopes := m.visibleScopes()
	for _, id := range m.sh.st.CachedSets() {
		scopes = append(scopes, store.Artifacts(id))
	}
	var cmds []tea.Cmd
	for _, sc := range scopes {
		if m.resync.running[sc] {
			continue
		}
		m.resync.running[sc] = true
		cmds = append(cmds, m.startList(sc, originResync))
	}
	return tea.Batch(append(cmds, m.inspect(m.selected))...)
}

// listDone settles a scope of the running resync.
func (m *Model) listDone(sc store.Scope) tea.Cmd {
	if !m.resync.running[sc] {
		return nil
	}
	delete(m.resync.running, sc)
	if len(m.resync.running) > 0 || !m.resync.again {
		return nil
	}
	m.resync.again = false
	return m.startResync()
}

// visibleScopes are the scopes of every screen on the stack.
func (m *Model) visibleScopes() []store.Scope {
	var out []store.Scope
	for _, s := range m.stack {
		out = append(out, s.Scopes()...)
	}
	return out
}
