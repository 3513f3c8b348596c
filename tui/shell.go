package tui

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/shell"
)

// The shell (TUI.md §3.10, PTYSHELL.md §12.2): a Cmd dials; on success
// Update hands the terminal to the shell's Command through tea.Exec, and
// the program's loop blocks until it returns. Events keep merging into
// the hub meanwhile; transfers go on.

type (
	// shellsMsg is GET /v1/shells: whether the server has the shell on.
	shellsMsg struct {
		list *cairn.ShellList
		err  error
	}
	// shellDialedMsg is a dial's outcome: an open session or a refusal.
	shellDialedMsg struct {
		dial    int
		wsID    string
		wsName  string
		session *ptyshell.Session
		err     error
	}
	// shellExitedMsg is the shell's end, back in the TUI.
	shellExitedMsg struct {
		wsID, wsName string
		result       ptyshell.Result
		err          error
	}
)

// shellState is the dial in flight, if any.
type shellState struct {
	dial   int // op ID of the dial in flight; 0 for none
	cancel context.CancelFunc
}

// checkShells asks the server whether it has the shell on.
func (m *Model) checkShells() tea.Cmd {
	b, ctx := m.backend, m.ctx
	return func() tea.Msg {
		l, err := b.FindShells(ctx, "")
		return shellsMsg{list: l, err: err}
	}
}

func (m *Model) onShells(s shellsMsg) {
	switch {
	case s.err == nil && !s.list.Enabled:
		m.sh.shellBlocked = "the server has the shell turned off (shell.enable)"
	case s.err == nil:
		m.sh.shellBlocked = ""
	}
	// An error (an older server, a failure) leaves it unknown: the dial
	// will say.
}

// openShell guards and dials (TUI.md §3.10 steps 1–2).
func (m *Model) openShell(w *cairn.Workspace) tea.Cmd {
	switch {
	case w.VolumeState != cairn.VolumeReady:
		return m.toast(common.LevelInfo, "shell needs volume READY — v provisions it")
	case m.sh.shellBlocked != "":
		return m.toast(common.LevelInfo, m.sh.shellBlocked)
	case m.shell.dial != 0:
		return m.toast(common.LevelInfo, "a shell is opening already — esc cancels it")
	}
	id := m.id()
	ctx, cancel := context.WithCancel(m.ctx)
	m.shell = shellState{dial: id, cancel: cancel}
	m.ops.AddTask(id, "opening shell on "+w.Name+"… (esc cancels)")
	b, wsID, wsName := m.backend, w.ID, w.Name
	size := ptyshell.Size{Cols: max(1, m.width), Rows: max(1, m.height)}
	term := m.c.Config.ShellTerm
	return func() tea.Msg {
		s, err := b.Shell(ctx, wsID, size, term)
		return shellDialedMsg{dial: id, wsID: wsID, wsName: wsName, session: s, err: err}
	}
}

// cancelShellDial is esc while dialing; false when nothing dials.
func (m *Model) cancelShellDial() bool {
	if m.shell.dial == 0 {
		return false
	}
	m.shell.cancel()
	m.ops.EndTask(m.shell.dial)
	m.shell = shellState{}
	return true
}

// onShellDialed hands the terminal over, or toasts the refusal without
// leaving the alt screen.
func (m *Model) onShellDialed(d shellDialedMsg) tea.Cmd {
	if d.dial == 0 || d.dial != m.shell.dial {
		return closeSession(d.session) // cancelled meanwhile
	}
	m.ops.EndTask(d.dial)
	m.shell.cancel()
	m.shell = shellState{}
	if d.err != nil {
		if errors.Is(d.err, context.Canceled) {
			return nil
		}
		m.rememberRefusal(d.err)
		return m.errorToast("shell on "+d.wsName+": "+common.Sentence(d.err, common.Subject{Workspace: d.wsName, Scope: "shell"}), d.err)
	}
	cfg := m.c.Config
	cmd, err := m.shellFactory(d.session, shell.NewOptions(d.wsName, cfg.ShellAbandonKey, cfg.ShellPauseOnExit))
	if err != nil {
		return tea.Batch(closeSession(d.session), m.toast(common.LevelError, "shell: "+err.Error())) // never handed over
	}
	wsID, wsName := d.wsID, d.wsName
	return tea.Exec(cmd, func(err error) tea.Msg {
		return shellExitedMsg{wsID: wsID, wsName: wsName, result: cmd.Result(), err: err}
	})
}

// closeSession ends a session that is not handed over, in a Cmd: Close
// waits up to a second for the server's close frame, and Update never
// blocks (TUI.md §4.5).
func closeSession(s *ptyshell.Session) tea.Cmd {
	if s == nil {
		return nil
	}
	return func() tea.Msg {
		_ = s.Close() // Close always returns nil
		return nil
	}
}

// rememberRefusal keeps s disabled after a 403, or a 404/501 from the
// shell endpoint (TUI.md §3.3).
func (m *Model) rememberRefusal(err error) {
	e, ok := errors.AsType[*cairn.Error](err)
	if !ok {
		return
	}
	switch {
	case e.Reason == cairn.ReasonForbidden:
		m.sh.shellBlocked = "this token lacks the shell scope"
	case e.Reason == cairn.ReasonShellDisabled:
		m.sh.shellBlocked = common.Sentence(err, common.Subject{})
	case e.Status == http.StatusNotFound && e.Reason != cairn.ReasonWorkspaceNotFound,
		e.Status == http.StatusNotImplemented:
		m.sh.shellBlocked = "this server has no shell endpoint (shell.enable is off)"
	}
}

// onShellExited is the way back: a toast saying how the shell ended (a
// missing EXIT is never shown as 0), the window size, and a resync — the
// events of the meantime are in the hub, but a long shell may have
// overflowed it.
func (m *Model) onShellExited(x shellExitedMsg) tea.Cmd {
	level, text := shellEnd(x)
	return tea.Batch(m.toast(level, text), tea.WindowSize(), m.startResync())
}

func shellEnd(x shellExitedMsg) (common.Level, string) {
	r := x.result
	switch {
	case errors.Is(x.err, ptyshell.ErrNotTerminal):
		return common.LevelError, "a shell needs a terminal (stdin and stdout)"
	case r.Ending == ptyshell.EndExit && (r.Exit.Reason == ptyshell.ReasonExited || r.Exit.Reason == ""):
		return common.LevelInfo, fmt.Sprintf("shell exited: status %d (%s)", r.Exit.ExitCode, x.wsName)
	case r.Ending == ptyshell.EndExit:
		text := r.Summary()
		text = text[len("[cairn: ") : len(text)-1]
		return common.LevelWarn, fmt.Sprintf("shell on %s %s", x.wsName, trimShell(text))
	case r.Ending == ptyshell.EndDetach:
		return common.LevelInfo, "left the shell on " + x.wsName + "; the server ends it"
	case r.Ending == ptyshell.EndSignal:
		return common.LevelWarn, fmt.Sprintf("left the shell on %s on %v; the server ends it", x.wsName, r.Signal)
	case r.Ending == ptyshell.EndLost:
		return common.LevelError, "shell on " + x.wsName + " lost its connection (no exit status)"
	case x.err != nil:
		return common.LevelError, "shell on " + x.wsName + ": " + x.err.Error()
	}
	return common.LevelError, "shell on " + x.wsName + " ended without an exit status"
}

// trimShell turns "shell ended: idle timeout (status 129)" into "ended:
// idle timeout (status 129)".
func trimShell(s string) string {
	const p = "shell "
	if len(s) > len(p) && s[:len(p)] == p {
		return s[len(p):]
	}
	return s
}
