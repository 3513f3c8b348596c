package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// Ticks: 100 ms only while something animates or counts down, 30 s for
// ages while rows show, otherwise none.
const (
	fastTick = 100 * time.Millisecond
	slowTick = 30 * time.Second
)

// ticker keeps at most one tick outstanding: the one the state needs.
type ticker struct {
	gen      int
	interval time.Duration // of the outstanding tick, 0 for none
}

// schedule starts a tick of want, replacing a different outstanding one
// (whose message then goes stale).
func (t *ticker) schedule(want time.Duration, after func(time.Duration, func() tea.Msg) tea.Cmd, clock func() time.Time) tea.Cmd {
	if want == t.interval {
		return nil
	}
	t.gen++
	t.interval = want
	if want == 0 {
		return nil
	}
	gen := t.gen
	return after(want, func() tea.Msg { return tickMsg{gen: gen, now: clock()} })
}

// fired reports whether msg is the outstanding tick, which is then gone.
func (t *ticker) fired(msg tickMsg) bool {
	if msg.gen != t.gen {
		return false
	}
	t.interval = 0
	return true
}

// wantTick is the tick the current state needs: fast while a spinner, a
// highlight or a countdown shows, slow for ages while rows show.
func (m *Model) wantTick() time.Duration {
	switch {
	case m.ops.Busy() || m.feed.Counting() || m.xfer.Running() > 0 || m.sh.Now().Before(m.highlightUntil):
		return fastTick
	case m.sh.st.WorkspaceCount() > 0:
		return slowTick
	}
	return 0
}
