package tui

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/store"
)

// connKind is the connection state of TUI.md §2.7. None of them exits.
type connKind uint8

const (
	connConnecting connKind = iota + 1
	connLive
	connReconnecting
	connOffline
	connPolling
	connOff      // events.mode: off
	connRejected // the server refused the token: no retries until r
)

// offlineAfter is how long reconnecting lasts before the badge says
// offline.
const offlineAfter = 30 * time.Second

type connState struct {
	kind        connKind
	everLive    bool
	lostAt      time.Time
	retryAt     time.Time
	failedDials int
	// rejectedBy is the reason of the refusal that stopped the retries
	// (unauthenticated or forbidden) while the state is connRejected.
	rejectedBy  cairn.Reason
	restFailing bool
	restWorks   bool // a list succeeded once
	lastGood    time.Time
	pollGen     int
}

func newConn(mode string) connState {
	switch mode {
	case "poll":
		return connState{kind: connPolling}
	case "off":
		return connState{kind: connOff}
	}
	return connState{kind: connConnecting}
}

// onConn applies one transition from the pump.
func (m *Model) onConn(c live.Conn) tea.Cmd {
	switch c.Kind {
	case live.ConnHello:
		return m.onHello(c)
	case live.ConnLost:
		return m.onLost(c)
	case live.ConnStopped:
		return m.rejected(c.Err)
	}
	return nil
}

// rejected is the token refused, by the events stream or a list: its own
// state and badge, never offline, and no retries until r (TUI.md §2.7).
func (m *Model) rejected(err error) tea.Cmd {
	reason := cairn.ErrorReason(err)
	if m.conn.kind == connRejected && m.conn.rejectedBy == reason {
		return nil // said once
	}
	m.conn.kind, m.conn.rejectedBy = connRejected, reason
	return m.toastErr(err, common.Subject{Scope: "read"})
}

// retryRejected is r after a refusal: dial again.
func (m *Model) retryRejected() {
	if m.conn.kind != connRejected {
		return
	}
	m.conn.kind, m.conn.rejectedBy = connConnecting, ""
	m.pump.Retry()
}

// onHello goes live; after a loss (or a list made without hello) it
// resyncs, since missed events are gone.
func (m *Model) onHello(c live.Conn) tea.Cmd {
	if !c.ServerTime.IsZero() {
		m.sh.offset = c.ServerTime.Sub(c.At)
	}
	m.conn.kind, m.conn.everLive, m.conn.failedDials, m.conn.rejectedBy = connLive, true, 0, ""
	m.conn.lastGood = c.At
	m.conn.pollGen++ // a running poll loop dies
	if !m.listed {
		return m.startFirstList()
	}
	return m.startResync()
}

func (m *Model) onLost(c live.Conn) tea.Cmd {
	m.conn.failedDials++
	m.conn.retryAt = c.At.Add(c.RetryIn)
	switch {
	case c.Unavailable:
		return tea.Batch(m.startPolling(), m.startFirstList())
	case m.conn.kind == connConnecting:
		return m.pollIfDialsFail()
	case m.conn.kind == connLive:
		m.conn.kind, m.conn.lostAt = connReconnecting, c.At
	case m.conn.kind == connReconnecting && c.At.Sub(m.conn.lostAt) > offlineAfter:
		m.conn.kind = connOffline
	}
	return nil
}

// pollIfDialsFail polls after three failed dials, once REST is known to
// work (TUI.md §2.7).
func (m *Model) pollIfDialsFail() tea.Cmd {
	if m.conn.kind != connConnecting || m.conn.failedDials < 3 || !m.conn.restWorks {
		return nil
	}
	return m.startPolling()
}

// startPolling switches to polling; a loop already running keeps going.
func (m *Model) startPolling() tea.Cmd {
	if m.conn.kind == connPolling {
		return nil
	}
	m.conn.kind = connPolling
	m.conn.pollGen++
	return m.pollTick()
}

func (m *Model) pollTick() tea.Cmd {
	gen := m.conn.pollGen
	return m.c.After(m.c.Config.PollInterval, func() tea.Msg { return pollTickMsg{gen: gen} })
}

// onPoll re-lists the visible scopes, paused while a modal is open.
func (m *Model) onPoll(p pollTickMsg) tea.Cmd {
	if p.gen != m.conn.pollGen || m.conn.kind != connPolling {
		return nil
	}
	if m.modal != nil {
		return m.pollTick()
	}
	cmds := []tea.Cmd{m.pollTick()}
	for _, sc := range m.visibleScopes() {
		cmds = append(cmds, m.startList(sc, originPoll))
	}
	return tea.Batch(cmds...)
}

// onHelloTimeout lists without hello: the later hello resyncs.
func (m *Model) onHelloTimeout() tea.Cmd {
	if m.listed {
		return nil
	}
	return m.startFirstList()
}

// startFirstList lists the workspaces once; polling mode starts its loop.
func (m *Model) startFirstList() tea.Cmd {
	if m.listed {
		return nil
	}
	m.listed = true
	cmd := tea.Batch(m.startList(store.Workspaces(), originFirst), m.shell.Check())
	if m.conn.kind == connPolling && m.conn.pollGen == 0 {
		m.conn.pollGen++
		return tea.Batch(cmd, m.pollTick())
	}
	return cmd
}

// checkOffline turns a long reconnect into offline.
func (m *Model) checkOffline() {
	if m.conn.kind == connReconnecting && m.sh.now.Sub(m.conn.lostAt) > offlineAfter {
		m.conn.kind = connOffline
	}
}
