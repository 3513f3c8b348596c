package tui

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

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
}

// Run starts cairn-tui in the alt screen and returns when the operator
// quits. Connection loss never ends it.
func Run(ctx context.Context, ro RunOptions) error {
	o := ro.Options
	if o.Output == nil {
		o.Output = os.Stdout
	}
	prepareTerminal(&o, ro.StdoutTerminal)
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
	opts := []tea.ProgramOption{
		// 30 frames a second: the renderer wakes on every frame even when
		// idle, and at the default 60 that alone is ~1 % of a core.
		tea.WithAltScreen(), tea.WithFPS(30), tea.WithContext(ctx), tea.WithOutput(o.Output),
		tea.WithFilter(func(_ tea.Model, msg tea.Msg) tea.Msg {
			logf("%T", msg)
			return m.filter(msg)
		}),
	}
	if ro.Input != nil {
		opts = append(opts, tea.WithInput(ro.Input))
	}
	if o.Config.Mouse {
		opts = append(opts, tea.WithMouseCellMotion())
	}
	_, err = tea.NewProgram(m, opts...).Run()
	if err == tea.ErrProgramKilled && ctx.Err() != nil {
		return nil
	}
	return err
}

// prepareTerminal fixes the colour profile and background before the
// program owns the terminal: asking later can hang (lipgloss#73).
func prepareTerminal(o *Options, stdoutTerminal bool) {
	cfg := o.Config
	plain := cfg.NoColor(stdoutTerminal)
	if plain {
		lipgloss.SetColorProfile(termenv.Ascii)
	} else if cfg.Theme == "auto" {
		lipgloss.SetHasDarkBackground(lipgloss.HasDarkBackground())
	}
	if o.Theme == nil {
		g := theme.Unicode()
		if cfg.ASCII() {
			g = theme.ASCII()
		}
		o.Theme = theme.New(cfg.Theme, g)
		o.Theme.Plain = plain
	}
}

// filter applies confirm_quit and the running transfers to quit requests
// that did not come from a key (a signal): they ask like q does.
func (m *Model) filter(msg tea.Msg) tea.Msg {
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
