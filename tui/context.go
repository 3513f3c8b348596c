package tui

import (
	"context"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/action"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/nav"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Connector opens a context of the config file by name: it resolves the
// context's server and token (a token command may run) and returns the
// backend over it and the server's URL. It does I/O; the root calls it in
// a Cmd.
type Connector func(name string) (Backend, string, error)

// attach makes b the server the model works with: a fresh store, pump,
// feed, operations, action flow, shell hand-over, screen stack and files
// watch, all living in a new connection context. The transfer queue, the
// toasts and the hub outlive it: transfers of the previous server keep
// running and stay in the tray.
func (m *Model) attach(b Backend) {
	if m.connCancel != nil {
		m.connCancel()
		m.act.Close() // an edit of the old server's volume ends with it
	}
	m.connCtx, m.connCancel = context.WithCancel(m.ctx)
	m.connSince = m.id()
	m.backend = b
	m.fw.reset()
	now := m.sh.now
	m.sh = newShared(m.c.Config.CacheMaxArtifacts, now)
	m.c.Data = m.sh
	m.pump = live.NewPump(b, m.hub, m.clock)
	m.ops = ops.NewRunner(m.connCtx, b)
	m.act = action.New(m.connCtx, m.c, flowHost{m}, m.ops, b, m.sh.st)
	m.sh.pending = m.ops.Pending
	m.sh.transfers = m.xfer.All
	m.feed = feed.New(m.connCtx, m.c, feedHost{m}, b, m.pump, m.sh.st, m.clock)
	m.sh.feed = m.feed
	m.shell = shell.NewHandover(m.connCtx, m.c, shellHost{m}, b, m.shellFactory, m.shellSecrets)
	m.sh.shellBlocked = m.shell.Blocked
	m.stack = nav.New(m.c, m.sh.st)
	m.xfer.SetBackend(b)
	if m.width > 0 {
		m.resize(m.width, m.height)
	}
}

// contextOpenedMsg is a context opened, its old pump stopped and the hub
// moved to a new epoch; or why it could not be.
type contextOpenedMsg struct {
	name, server string
	backend      Backend
	epoch        int
	err          error
}

// openContext connects to the named context. The old pump stops before
// the hub's new epoch begins, so no frame of the old server is taken as
// the new one's.
func (m *Model) openContext(name string) tea.Cmd {
	if m.connect == nil {
		return m.notes.Show(toast.LevelInfo, "no config file contexts — see cairn config get-contexts")
	}
	if name == m.c.Config.Context {
		return m.notes.Show(toast.LevelInfo, "already on context "+name)
	}
	connect, pump, hub := m.connect, m.pump, m.hub
	return tea.Batch(m.notes.Show(toast.LevelInfo, "switching to context "+name+"…"), func() tea.Msg {
		b, server, err := connect(name)
		if err != nil {
			return contextOpenedMsg{name: name, err: err}
		}
		pump.StopWithin(2 * time.Second)
		return contextOpenedMsg{name: name, server: server, backend: b, epoch: hub.NewEpoch()}
	})
}

// onContextOpened moves the model onto the opened context and starts its
// data: the header names it, the old subscription is gone.
func (m *Model) onContextOpened(msg contextOpenedMsg) tea.Cmd {
	if msg.err != nil {
		return m.notes.Show(toast.LevelError, "cannot open context "+msg.name+": "+msg.err.Error())
	}
	cfg := *m.c.Config
	cfg.Server, cfg.Context = msg.server, msg.name
	m.c.Config = &cfg
	m.epoch = msg.epoch
	m.closeModal()
	m.attach(msg.backend)
	return tea.Batch(m.start(), m.notes.Show(toast.LevelOK, "context "+msg.name+" ("+serverLabel(msg.server)+")"))
}
