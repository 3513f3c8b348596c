// Package shell is what cairn-tui hands to tea.Exec for a shell: a
// Command over ptyshell's Terminal, which puts the terminal in raw mode,
// prints the banner, pumps both ways, and restores the terminal and its
// modes on every path, then waits for Enter as shell.pause_on_exit says.
// Tests replace the Factory with a fake that chooses how the session ends.
package shell

import (
	"io"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/ptyshell"
)

// Command is a tea.ExecCommand that says, once Run returned, how the
// session ended.
type Command interface {
	tea.ExecCommand
	Result() ptyshell.Result
}

// Options are the Terminal's options and the pause after the shell.
type Options struct {
	ptyshell.TerminalOptions
	// Pause is shell.pause_on_exit: auto waits for Enter after an unclean
	// end — a non-zero status or a lost connection, as the Terminal does —
	// always after every end, never not at all.
	Pause string
}

// Factory builds the Command for an open session.
type Factory func(s *ptyshell.Session, o Options) (Command, error)

// New is the production Factory: ptyshell's Terminal, which owns and
// closes the session, with the pause of o.Pause after it.
func New(s *ptyshell.Session, o Options) (Command, error) {
	t, err := ptyshell.NewTerminal(s, o.TerminalOptions)
	if err != nil {
		return nil, err
	}
	return &pausing{Terminal: t, pause: o.Pause}, nil
}

// NewOptions are the options from the TUI config: the workspace for the
// banner, shell.abandon_key (written "ctrl+]" like the other keys;
// ptyshell spells it "ctrl-]") and shell.pause_on_exit.
func NewOptions(workspace, abandonKey, pauseOnExit string) Options {
	key := strings.ToLower(strings.TrimSpace(abandonKey))
	if rest, ok := strings.CutPrefix(key, "ctrl+"); ok {
		key = "ctrl-" + rest
	}
	return Options{TerminalOptions: ptyshell.TerminalOptions{Workspace: workspace, DetachKey: key, PauseOnExit: pauseOnExit != "never"},
		Pause: pauseOnExit}
}

// pausing is the Terminal with the pause after a clean end that "always"
// adds to the Terminal's own.
type pausing struct {
	*ptyshell.Terminal
	pause string
	in    io.Reader
	out   io.Writer
}

func (p *pausing) SetStdin(r io.Reader) {
	p.in = r
	p.Terminal.SetStdin(r)
}

func (p *pausing) SetStdout(w io.Writer) {
	p.out = w
	p.Terminal.SetStdout(w)
}

// Run runs the shell; the terminal is cooked again when it returns, so the
// pause reads a line.
func (p *pausing) Run() error {
	err := p.Terminal.Run()
	r := p.Result()
	if Pauses(p.pause, r) && !terminalPauses(r) && p.in != nil && p.out != nil {
		_, _ = io.WriteString(p.out, "Press Enter to return.") // best effort: the terminal may be gone
		waitForEnter(p.in)
	}
	return err
}

// Pauses reports whether the pause mode waits after a session that ended
// as r, the Terminal's own pause included. A session that never ran (no
// terminal) does not wait.
func Pauses(mode string, r ptyshell.Result) bool {
	switch {
	case r.Ending == ptyshell.EndNone || mode == "never":
		return false
	case mode == "always":
		return true
	}
	return terminalPauses(r)
}

// terminalPauses is the Terminal's PauseOnExit rule.
func terminalPauses(r ptyshell.Result) bool {
	return r.Ending == ptyshell.EndLost || (r.Ending == ptyshell.EndExit && r.Exit.ExitCode != 0)
}

func waitForEnter(r io.Reader) {
	buf := make([]byte, 256)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b == '\n' || b == '\r' {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
