package tui

import (
	"cmp"
	"context"
	"errors"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn/tui/action"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/nav"
	"github.com/cairn-dev/cairn/tui/notice"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/shell"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/palette"
)

// Model is the root model. It routes: keys by mode, each part's messages
// to the part, and owns only what crosses them — the modal slot, the size
// and layout, the model's time and the IDs. Each part owns its state,
// Update and View: the screen stack (nav), what an action does (action),
// operations (ops), the store's link to the server (feed), the transfer
// queue and tray (transfer), the shell hand-over (shell) and the toasts
// (notice); hosts.go is what they ask of the root.
type Model struct {
	c       *deps.Deps
	sh      *shared
	backend Backend
	clip    Clipboard
	clock   func() time.Time

	// ctx is the program's lifetime; Close cancels it, ending every
	// request, the pump and the hub wait.
	ctx    context.Context
	cancel context.CancelFunc
	hub    *live.Hub
	pump   *live.Pump
	// fw is the files pane's subscription to its directory.
	fw filesWatch
	// armHub returns the hub wait; tests replace it.
	armHub func() tea.Cmd

	// The server connection: its lifetime (cancelled on a context
	// switch), where its replies start (older ones are another server's)
	// and the hub epoch its events carry; connect opens another context.
	connCtx      context.Context
	connCancel   context.CancelFunc
	connSince    int
	epoch        int
	connect      Connector
	shellFactory shell.Factory
	shellSecrets shell.Keeper // outlives a :ctx switch: shell IDs are unique across servers

	stack *nav.Stack
	modal screen.Modal
	owner modalOwner

	act   *action.Flow
	ops   *ops.Runner
	feed  *feed.Feed
	xfer  *transfer.Queue
	shell *shell.Handover
	notes *notice.Board

	trayRows int // the tray's height in this window
	// history is the command palette's, across openings.
	history *palette.History

	width, height  int
	tick           ticker
	highlightUntil time.Time
	nextID         int
	quitting       bool
}

// New builds the root model. It does no I/O; Init starts the pump.
func New(o Options) (*Model, error) {
	if o.Config == nil || o.Backend == nil {
		return nil, errors.New("tui: Options.Config and Options.Backend are required")
	}
	o, err := withDefaults(o)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Model{
		clip: o.Clipboard, clock: o.Clock,
		ctx: ctx, cancel: cancel,
		sh: newShared(o.Config.CacheMaxArtifacts, o.Clock()),
	}
	m.c = &deps.Deps{Theme: o.Theme, Keys: o.Keys, Config: o.Config, After: o.After, Remote: o.Remote, Editor: o.Editor}
	m.hub = live.NewHub(50*time.Millisecond, 50000, o.Clock)
	m.xfer = transfer.New(ctx, transfer.SettingsOf(o.Config), m.c.Theme, queueHost{m}, o.Backend, m.hub)
	m.armHub = m.waitHub
	m.fw.watch = live.NewFileWatch(m.hub)
	m.history = palette.NewHistory(100)
	m.shellFactory, m.shellSecrets, m.connect = o.ShellCommand, o.ShellSecrets, o.Connect
	m.attach(o.Backend)
	m.notes = notice.New(m.c, func() time.Time { return m.sh.Now() }, m.wsName)
	m.notes.Warnings(o.Config.Warnings)
	return m, nil
}

func withDefaults(o Options) (Options, error) {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.After == nil {
		o.After = deps.Tick
	}
	if o.Theme == nil {
		g := theme.Unicode()
		if o.Config.ASCII() {
			g = theme.ASCII()
		}
		o.Theme = theme.New(o.Config.Theme, g)
	}
	if o.Keys == nil {
		km, warnings, err := keys.New(o.Config.Keys)
		if err != nil {
			return o, err
		}
		o.Config.Warnings = append(o.Config.Warnings, warnings...)
		o.Keys = km
	}
	if o.ShellCommand == nil {
		o.ShellCommand = shell.New
	}
	o.Editor = cmp.Or(strings.TrimSpace(o.Editor), strings.TrimSpace(os.Getenv("EDITOR")), action.DefaultEditor)
	if o.ShellSecrets == nil {
		o.ShellSecrets = shell.NewMemoryKeeper()
	}
	if o.Clipboard == nil {
		out := o.Output
		if out == nil {
			out = os.Stdout
		}
		o.Clipboard = osc52{out: termenv.NewOutput(out)}
	}
	return o, nil
}

// Init starts the event pump and the hub wait (or, without events, the
// first list at once).
func (m *Model) Init() tea.Cmd {
	if m.c.Config.EventsMode != "ws" {
		return m.start()
	}
	return tea.Batch(m.armHub(), m.start())
}

// start begins the connection's data: the pump and the hello wait, or
// without events the first list at once.
func (m *Model) start() tea.Cmd {
	if m.c.Config.EventsMode != "ws" {
		return func() tea.Msg { return feed.StartMsg{} }
	}
	pump, ctx := m.pump, m.connCtx
	return tea.Batch(
		func() tea.Msg { pump.Start(ctx); return nil },
		m.c.After(1500*time.Millisecond, func() tea.Msg { return feed.HelloTimeoutMsg{} }),
	)
}

// Close ends everything the model started: requests, transfers, the pump,
// the files watch and the hub wait. It waits up to 2 s in all for the
// pump's and the watch's goroutines and for cancelled transfers to remove
// their part files. Safe to call twice.
func (m *Model) Close() {
	m.cancel()
	m.connCancel()
	m.act.Close()
	deadline := time.Now().Add(2 * time.Second)
	m.pump.StopWithin(2 * time.Second)
	m.fw.watch.StopWithin(max(time.Millisecond, time.Until(deadline)))
	m.xfer.Close(time.Until(deadline))
}

func (m *Model) waitHub() tea.Cmd {
	hub, ctx := m.hub, m.ctx
	return func() tea.Msg {
		b, err := hub.Wait(ctx)
		if err != nil {
			return nil // the program is ending
		}
		return hubMsg{batch: b}
	}
}

func (m *Model) id() int {
	m.nextID++
	return m.nextID
}

// Store exposes the entity store for tests and benchmarks.
func (m *Model) Store() *store.Store { return m.sh.st }

// Config is the effective configuration.
func (m *Model) Config() *config.Config { return m.c.Config }
