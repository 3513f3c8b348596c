package tui

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn/tui/theme"
)

// RunOptions is what Run needs besides the model's Options.
type RunOptions struct {
	Options
	Input          io.Reader
	StdoutTerminal bool
	// Renderer is the renderer the theme draws with; nil means lipgloss's
	// global one, which a process serving several terminals (SSH
	// sessions) cannot share: each has its own TERM and NO_COLOR.
	Renderer *lipgloss.Renderer
	// Resizes are the terminal's window changes when no SIGWINCH reports
	// them (an SSH session's); nil for a local terminal.
	Resizes <-chan tea.WindowSizeMsg
	// FPS is the renderer's frame rate; 0 means 30.
	FPS int
	// Hosted is set when the program is one of several in a server
	// process: it leaves the process's signals alone (SIGINT, SIGTERM
	// and the suspend of ctrl+z are the server's, not a session's).
	Hosted bool
}

// Run starts cairn-tui in the alt screen and returns when the operator
// quits. Connection loss never ends it.
func Run(ctx context.Context, ro RunOptions) error {
	o := ro.Options
	if o.Output == nil {
		o.Output = os.Stdout
	}
	prepareTerminal(&o, ro.StdoutTerminal, ro.Renderer)
	m, err := New(o)
	if err != nil {
		return err
	}
	defer m.Close()
	logf, closeLog, err := debugLog(o.Config.DebugLog)
	if err != nil {
		return err
	}
	defer closeLog()
	p := tea.NewProgram(m, programOptions(ro, o, func(msg tea.Msg) tea.Msg {
		logf("%T", msg)
		return m.filter(msg)
	})...)
	if ro.Resizes != nil {
		stop := forwardResizes(p, ro.Resizes)
		defer stop()
	}
	stop := quitWhenDone(ctx, p)
	defer stop()
	_, err = p.Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// endedMsg ends the program because its context ended: a quit nothing
// confirms.
type endedMsg struct{}

// quitWhenDone quits p when ctx ends, as a confirmed q does, and kills it
// only if it has not ended killGrace later. bubbletea's own WithContext
// kills at once, and a killed program does not wait for its input reader,
// which then outlives it: one goroutine and an epoll descriptor for every
// SSH session that ended by its client going. stop ends the watch.
func quitWhenDone(ctx context.Context, p *tea.Program) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
		case <-quit:
			return
		}
		p.Send(endedMsg{}) // returns at once once the program has ended
		select {
		case <-quit:
		case <-time.After(killGrace):
			p.Kill()
		}
	}()
	return func() { close(quit); <-done }
}

// killGrace is how long a program whose context ended may take to quit.
const killGrace = 5 * time.Second

func programOptions(ro RunOptions, o Options, filter func(tea.Msg) tea.Msg) []tea.ProgramOption {
	// 30 frames a second: the renderer wakes on every frame even when
	// idle, and at the default 60 that alone is ~1 % of a core.
	fps := cmp.Or(ro.FPS, 30)
	opts := []tea.ProgramOption{
		tea.WithAltScreen(), tea.WithFPS(fps), tea.WithOutput(o.Output),
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg { return filter(msg) }),
	}
	if ro.Input != nil {
		opts = append(opts, tea.WithInput(ro.Input))
	}
	if ro.Hosted {
		opts = append(opts, tea.WithoutSignalHandler())
	}
	if o.Config.Mouse {
		opts = append(opts, tea.WithMouseCellMotion())
	}
	return opts
}

// forwardResizes sends each window change to p until stop is called;
// stop waits for the forwarding goroutine.
func forwardResizes(p *tea.Program, sizes <-chan tea.WindowSizeMsg) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case size := <-sizes:
				p.Send(size) // returns at once once the program has ended
			case <-quit:
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// prepareTerminal fixes the colour profile and background before the
// program owns the terminal: asking later can hang (lipgloss#73). With a
// renderer of its own it leaves the global one alone; that renderer's
// profile and background are the caller's to set (a remote terminal
// cannot be asked before the program runs).
func prepareTerminal(o *Options, stdoutTerminal bool, r *lipgloss.Renderer) {
	cfg := o.Config
	plain := cfg.NoColor(stdoutTerminal)
	switch {
	case r != nil && plain:
		r.SetColorProfile(termenv.Ascii)
	case r != nil:
	case plain:
		lipgloss.SetColorProfile(termenv.Ascii)
	case cfg.Theme == "auto":
		lipgloss.SetHasDarkBackground(lipgloss.HasDarkBackground())
	}
	if o.Theme == nil {
		g := theme.Unicode()
		if cfg.ASCII() {
			g = theme.ASCII()
		}
		if r == nil {
			r = lipgloss.DefaultRenderer()
		}
		o.Theme = theme.NewFor(r, cfg.Theme, g)
		o.Theme.Plain = plain
	}
}

// filter applies confirm_quit and the running transfers to quit requests
// that did not come from a key (a signal): they ask like q does.
func (m *Model) filter(msg tea.Msg) tea.Msg {
	if refused, ok := m.remoteRefusal(msg); ok {
		return refused
	}
	if _, ok := msg.(endedMsg); ok {
		m.quitting = true
		return tea.QuitMsg{}
	}
	ask := m.c.Config.ConfirmQuit || m.xfer.Active() > 0
	if _, ok := msg.(tea.QuitMsg); ok && ask && !m.quitting {
		return quitRequestMsg{}
	}
	return msg
}

// quitRequestMsg is a quit that must be confirmed first.
type quitRequestMsg struct{}

func debugLog(path string) (func(string, ...any), func(), error) {
	if path == "" {
		return func(string, ...any) {}, func() {}, nil
	}
	f, err := tea.LogToFile(path, "cairn-tui")
	if err != nil {
		return nil, nil, fmt.Errorf("debug log: %w", err)
	}
	return log.Printf, func() { _ = f.Close() }, nil
}
