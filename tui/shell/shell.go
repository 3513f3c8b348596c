// Package shell is what cairn-tui hands to tea.Exec for a shell: a
// Command over ptyshell's Terminal, which puts the terminal in raw mode,
// prints the banner, pumps both ways, and restores the terminal and its
// modes on every path (PTYSHELL.md §12). Tests replace the Factory with a
// fake that chooses how the session ends.
package shell

import (
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

// Factory builds the Command for an open session.
type Factory func(s *ptyshell.Session, o ptyshell.TerminalOptions) (Command, error)

// New is the production Factory: ptyshell's Terminal, which owns and
// closes the session.
func New(s *ptyshell.Session, o ptyshell.TerminalOptions) (Command, error) {
	t, err := ptyshell.NewTerminal(s, o)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Options are the Terminal's options from the TUI config: the workspace
// for the banner, shell.abandon_key (written "ctrl+]" like the other keys;
// ptyshell spells it "ctrl-]") and shell.pause_on_exit — auto and always
// both wait for Enter after an unclean end only, never does not wait.
func Options(workspace, abandonKey, pauseOnExit string) ptyshell.TerminalOptions {
	key := strings.ToLower(strings.TrimSpace(abandonKey))
	if rest, ok := strings.CutPrefix(key, "ctrl+"); ok {
		key = "ctrl-" + rest
	}
	return ptyshell.TerminalOptions{Workspace: workspace, DetachKey: key, PauseOnExit: pauseOnExit != "never"}
}
