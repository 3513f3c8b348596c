package feed

import (
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/store"
)

// ConnKind is the event connection's state, the one the header badge
// shows (docs/tui.md#live-updates). None of them exits.
type ConnKind uint8

const (
	Connecting ConnKind = iota + 1
	Live
	Reconnecting
	Offline
	Polling
	Off      // events.mode: off
	Rejected // the server refused the token: no retries until r
)

// offlineAfter is how long reconnecting lasts before the badge says
// offline.
const offlineAfter = 30 * time.Second

// Conn is the connection as the header shows it.
type Conn struct {
	Kind ConnKind
	// RetryAt is when the next dial may happen; LastGood when data last
	// arrived.
	RetryAt, LastGood time.Time
	// RejectedBy is the reason of the refusal that stopped the retries
	// (unauthenticated or forbidden) while Kind is Rejected.
	RejectedBy cairn.Reason
	// RESTFailing: the lists fail to reach the server too.
	RESTFailing bool

	everLive    bool
	lostAt      time.Time
	failedDials int
	restWorks   bool // a list succeeded once
	pollGen     int
	offset      time.Duration // server clock minus local clock, from hello
}

func newConn(mode string) Conn {
	switch mode {
	case "poll":
		return Conn{Kind: Polling}
	case "off":
		return Conn{Kind: Off}
	}
	return Conn{Kind: Connecting}
}

// Conn is the connection's state.
func (f *Feed) Conn() Conn { return f.conn }

// onConn applies one transition from the pump.
func (f *Feed) onConn(c live.Conn) tea.Cmd {
	switch c.Kind {
	case live.ConnHello:
		return f.onHello(c)
	case live.ConnLost:
		return f.onLost(c)
	case live.ConnStopped:
		return f.rejected(c.Err)
	}
	return nil
}

// rejected is the token refused, by the events stream or a list: its own
// state and badge, never offline, and no retries until r.
func (f *Feed) rejected(err error) tea.Cmd {
	reason := cairn.ErrorReason(err)
	if f.conn.Kind == Rejected && f.conn.RejectedBy == reason {
		return nil // said once
	}
	f.conn.Kind, f.conn.RejectedBy = Rejected, reason
	return f.host.ErrorToast(err, errtext.Subject{Scope: "read"})
}

// retryRejected is r after a refusal: dial again.
func (f *Feed) retryRejected() {
	if f.conn.Kind != Rejected {
		return
	}
	f.conn.Kind, f.conn.RejectedBy = Connecting, ""
	f.pump.Retry()
}

// onHello goes live; after a loss (or a list made without hello) it
// resyncs, since missed events are gone.
func (f *Feed) onHello(c live.Conn) tea.Cmd {
	if !c.ServerTime.IsZero() {
		f.conn.offset = c.ServerTime.Sub(c.At)
	}
	f.conn.Kind, f.conn.everLive, f.conn.failedDials, f.conn.RejectedBy = Live, true, 0, ""
	f.conn.LastGood = c.At
	f.conn.pollGen++ // a running poll loop dies
	if !f.listed {
		return f.startFirstList()
	}
	return f.Resync()
}

func (f *Feed) onLost(c live.Conn) tea.Cmd {
	f.conn.failedDials++
	f.conn.RetryAt = c.At.Add(c.RetryIn)
	switch {
	case c.Unavailable:
		return tea.Batch(f.startPolling(), f.startFirstList())
	case f.conn.Kind == Connecting:
		return f.pollIfDialsFail()
	case f.conn.Kind == Live:
		f.conn.Kind, f.conn.lostAt = Reconnecting, c.At
	case f.conn.Kind == Reconnecting && c.At.Sub(f.conn.lostAt) > offlineAfter:
		f.conn.Kind = Offline
	}
	return nil
}

// pollIfDialsFail polls after three failed dials, once REST is known to
// work.
func (f *Feed) pollIfDialsFail() tea.Cmd {
	if f.conn.Kind != Connecting || f.conn.failedDials < 3 || !f.conn.restWorks {
		return nil
	}
	return f.startPolling()
}

// startPolling switches to polling; a loop already running keeps going.
func (f *Feed) startPolling() tea.Cmd {
	if f.conn.Kind == Polling {
		return nil
	}
	f.conn.Kind = Polling
	f.conn.pollGen++
	return f.pollTick()
}

// pollTickMsg drives polling; a stale loop's gen no longer matches.
type pollTickMsg struct{ gen int }

func (f *Feed) pollTick() tea.Cmd {
	gen := f.conn.pollGen
	return f.c.After(f.c.Config.PollInterval, func() tea.Msg { return pollTickMsg{gen: gen} })
}

// onPoll re-lists the visible scopes, paused while a modal is open.
func (f *Feed) onPoll(p pollTickMsg) tea.Cmd {
	if p.gen != f.conn.pollGen || f.conn.Kind != Polling {
		return nil
	}
	if f.host.Paused() {
		return f.pollTick()
	}
	cmds := []tea.Cmd{f.pollTick()}
	for _, sc := range f.host.Scopes() {
		cmds = append(cmds, f.startList(sc, OriginPoll))
	}
	return tea.Batch(cmds...)
}

// onHelloTimeout lists without hello: the later hello resyncs.
func (f *Feed) onHelloTimeout() tea.Cmd {
	if f.listed {
		return nil
	}
	return f.startFirstList()
}

// startFirstList lists the workspaces once; polling mode starts its loop.
func (f *Feed) startFirstList() tea.Cmd {
	if f.listed {
		return nil
	}
	f.listed = true
	cmd := tea.Batch(f.startList(store.Workspaces(), OriginFirst), f.host.FirstList())
	if f.conn.Kind == Polling && f.conn.pollGen == 0 {
		f.conn.pollGen++
		return tea.Batch(cmd, f.pollTick())
	}
	return cmd
}

// CheckOffline turns a long reconnect into offline.
func (f *Feed) CheckOffline() {
	if f.conn.Kind == Reconnecting && f.host.Now().Sub(f.conn.lostAt) > offlineAfter {
		f.conn.Kind = Offline
	}
}

// Counting reports a countdown the header shows: a reconnect, or a failed
// list's next retry. The spinner tick runs while it does.
func (f *Feed) Counting() bool {
	if f.conn.Kind == Reconnecting {
		return true
	}
	for _, l := range f.lists {
		if l.err != nil && !l.retryAt.IsZero() {
			return true
		}
	}
	return false
}
