package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
)

// Ticks: 100 ms only while something animates or counts down, 30 s for
// ages while rows show, otherwise none (TUI.md §4.5 rule 6).
const (
	fastTick = 100 * time.Millisecond
	slowTick = 30 * time.Second
)

type tickState struct {
	gen      int
	interval time.Duration // of the outstanding tick, 0 for none
}

// wantTick is the tick the current state needs.
func (m *Model) wantTick() time.Duration {
	if m.animating() {
		return fastTick
	}
	if m.sh.st.WorkspaceCount() > 0 {
		return slowTick
	}
	return 0
}

// animating: a spinner, a highlight or a countdown shows.
func (m *Model) animating() bool {
	return m.ops.Busy() || m.feed.Counting() || m.xfer.Running() > 0 || m.highlighting()
}

// highlighting reports a row still inside its highlight window.
func (m *Model) highlighting() bool { return m.sh.Now().Before(m.highlightUntil) }

// scheduleTick starts the tick the state needs, replacing a different
// outstanding one (whose message then goes stale).
func (m *Model) scheduleTick() tea.Cmd {
	want := m.wantTick()
	if want == m.tick.interval {
		return nil
	}
	m.tick.gen++
	m.tick.interval = want
	if want == 0 {
		return nil
	}
	gen, clock := m.tick.gen, m.clock
	return m.c.After(want, func() tea.Msg { return tickMsg{gen: gen, now: clock()} })
}

func (m *Model) onTick(t tickMsg) tea.Cmd {
	if t.gen != m.tick.gen {
		return nil
	}
	m.tick.interval = 0
	m.sh.now = t.now
	m.feed.CheckOffline()
	m.stack.Broadcast(common.TimeMsg{})
	return nil
}
