package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// The hand-over: a Cmd dials; on success Update hands the terminal to the
// shell's Command through tea.Exec, and the program's loop blocks until it
// returns. Events keep merging into the hub meanwhile; transfers go on.

// Backend opens shells and says whether the server has them on.
type Backend interface {
	Shell(ctx context.Context, workspaceID string, size ptyshell.Size, term string) (*ptyshell.Session, error)
	FindShells(ctx context.Context, workspaceID string) (*cairn.ShellList, error)
	// CreateShell, AttachShell and ReattachShell are v2's: a shell apart
	// from its connections. A server without v2 answers CreateShell with
	// 404/405 (client.IsV2Unsupported) and the dial falls back to Shell.
	CreateShell(ctx context.Context, workspaceID string, size ptyshell.Size, term string) (*cairn.ShellSessionInfo, error)
	AttachShell(ctx context.Context, shellID, secret string, size ptyshell.Size) (*ptyshell.Session, error)
	ReattachShell(ctx context.Context, shellID, secret string, lostAt time.Time, detached time.Duration,
		size func() (ptyshell.Size, error)) (*ptyshell.Session, error)
	WatchShell(ctx context.Context, shellID string, size ptyshell.Size) (*ptyshell.Session, error)
}

// Host is what the hand-over asks of the root model from Update.
type Host interface {
	NextID() int
	// AddTask and EndTask show the dial on the status line.
	AddTask(id int, label string)
	EndTask(id int)
	Toast(level toast.Level, text string) tea.Cmd
	// ErrorToast shows sentence, keeping err's server detail for the log.
	ErrorToast(sentence string, err error) tea.Cmd
	// Returned is the way back from a shell: the window size and a resync.
	Returned() tea.Cmd
}

type (
	// listMsg is GET /v1/shells: whether the server has the shell on.
	listMsg struct {
		list *cairn.ShellList
		err  error
	}
	// DialedMsg is a dial's outcome: an open session or a refusal.
	DialedMsg struct {
		Dial         int
		WSID, WSName string
		Session      *ptyshell.Session
		// V2 is the v2 shell the session attaches to (nil for v1): a lost
		// connection reattaches to it. Watch is a read-only watch of
		// another's shell.
		V2    *cairn.ShellSessionInfo
		Watch bool
		Err   error
	}
	// ExitedMsg is the shell's end, back in the TUI.
	ExitedMsg struct {
		WSID, WSName string
		ShellID      string // a v2 shell's
		// Watch: the session only watched another's shell.
		Watch bool
		// Detached is a v2 shell's detached timeout, how long it runs on
		// without a writer; 0 when the server did not say.
		Detached time.Duration
		// ShellsKey opens the shells screen, where a v2 shell left running
		// is attached to again.
		ShellsKey string
		Result    ptyshell.Result
		Err       error
	}
)

// Handover dials shells and hands the terminal to them, one dial at a
// time, and remembers why the server opens none.
type Handover struct {
	c       *deps.Deps
	host    Host
	backend Backend
	ctx     context.Context
	factory Factory

	dial    int // op ID of the dial in flight; 0 for none
	cancel  context.CancelFunc
	blocked string
	// keep holds the secrets of the v2 shells this workbench created: the
	// shells screen attaches to them as their writer.
	keep Keeper
}

// Keeper keeps the resume secrets of the v2 shells a workbench created,
// by shell ID: in memory for one program, in the state directory that
// `cairn shell --attach` reads (client.ShellSecrets), or for an SSH key
// across its sessions.
type Keeper interface {
	Keep(info cairn.ShellSessionInfo) error
	Lookup(shellID string) (cairn.ShellSessionInfo, bool)
	Forget(shellID string)
}

// NewHandover returns the hand-over of a program living within ctx;
// factory builds what tea.Exec runs; keep holds the secrets of the shells
// it creates.
func NewHandover(ctx context.Context, c *deps.Deps, host Host, b Backend, factory Factory, keep Keeper) *Handover {
	return &Handover{c: c, host: host, backend: b, ctx: ctx, factory: factory, keep: keep}
}

// Blocked is why no shell can open on this server ("" when it can, as far
// as is known): turned off, or refused before.
func (h *Handover) Blocked() string { return h.blocked }

// Dialing is the dial in flight, 0 for none.
func (h *Handover) Dialing() int { return h.dial }

// SetFactory replaces what tea.Exec runs (tests choose how shells end).
func (h *Handover) SetFactory(f Factory) { h.factory = f }

// Check asks the server whether it has the shell on.
func (h *Handover) Check() tea.Cmd {
	b, ctx := h.backend, h.ctx
	return func() tea.Msg {
		l, err := b.FindShells(ctx, "")
		return listMsg{list: l, err: err}
	}
}

// Update handles the hand-over's messages; ok is false for any other.
func (h *Handover) Update(msg tea.Msg) (cmd tea.Cmd, ok bool) {
	switch msg := msg.(type) {
	case listMsg:
		h.onList(msg)
		return nil, true
	case DialedMsg:
		return h.onDialed(msg), true
	case ExitedMsg:
		if msg.Result.Ending == ptyshell.EndExit && msg.Result.Exit.Reason != ptyshell.ReasonTakenOver {
			h.keep.Forget(msg.ShellID) // it ended: nothing to attach to
		}
		level, text := End(msg)
		return tea.Batch(h.host.Toast(level, text), h.host.Returned()), true
	}
	return nil, false
}

func (h *Handover) onList(s listMsg) {
	switch {
	case s.err == nil && !s.list.Enabled:
		h.blocked = "the server has the shell turned off (shell.enable)"
	case s.err == nil:
		h.blocked = ""
	}
	// An error (an older server, a failure) leaves it unknown: the dial
	// will say.
}

// Open guards and dials a shell of size on w: a guard that stops it (no
// READY volume, a refusal remembered, a dial under way) is a toast, and
// the dial runs in a Cmd.
func (h *Handover) Open(w *cairn.Workspace, size ptyshell.Size) tea.Cmd {
	switch {
	case w.VolumeState != cairn.VolumeReady:
		return h.host.Toast(toast.LevelInfo, "shell needs volume READY — v provisions it")
	case h.blocked != "":
		return h.host.Toast(toast.LevelInfo, h.blocked)
	case h.dial != 0:
		return h.host.Toast(toast.LevelInfo, "a shell is opening already — esc cancels it")
	}
	id := h.host.NextID()
	ctx, cancel := context.WithCancel(h.ctx)
	h.dial, h.cancel = id, cancel
	h.host.AddTask(id, "opening shell on "+w.Name+"… (esc cancels)")
	b, wsID, wsName, term := h.backend, w.ID, w.Name, h.c.Config.ShellTerm
	return func() tea.Msg {
		info, err := b.CreateShell(ctx, wsID, size, term)
		if client.IsV2Unsupported(err) {
			s, err := b.Shell(ctx, wsID, size, term)
			return DialedMsg{Dial: id, WSID: wsID, WSName: wsName, Session: s, Err: err}
		}
		if err != nil {
			return DialedMsg{Dial: id, WSID: wsID, WSName: wsName, Err: err}
		}
		s, err := b.AttachShell(ctx, info.ShellID, info.Secret, size)
		return DialedMsg{Dial: id, WSID: wsID, WSName: wsName, Session: s, V2: info, Err: err}
	}
}

// Reopen opens a live shell from the shells screen: as its writer when
// this TUI created it (it holds the secret), else watching it read-only.
func (h *Handover) Reopen(shellID, wsID, wsName string, size ptyshell.Size) tea.Cmd {
	if h.dial != 0 {
		return h.host.Toast(toast.LevelInfo, "a shell is opening already — esc cancels it")
	}
	id := h.host.NextID()
	ctx, cancel := context.WithCancel(h.ctx)
	h.dial, h.cancel = id, cancel
	info, mine := h.keep.Lookup(shellID)
	word := "watching"
	if mine {
		word = "attaching to"
	}
	h.host.AddTask(id, word+" shell "+shellID+"… (esc cancels)")
	b := h.backend
	return func() tea.Msg {
		if mine {
			s, err := b.AttachShell(ctx, info.ShellID, info.Secret, size)
			return DialedMsg{Dial: id, WSID: wsID, WSName: wsName, Session: s, V2: &info, Err: err}
		}
		s, err := b.WatchShell(ctx, shellID, size)
		return DialedMsg{Dial: id, WSID: wsID, WSName: wsName, Session: s, Watch: true, Err: err}
	}
}

// CancelDial is esc while dialing; false when nothing dials.
func (h *Handover) CancelDial() bool {
	if h.dial == 0 {
		return false
	}
	h.endDial()
	return true
}

func (h *Handover) endDial() {
	h.cancel()
	h.host.EndTask(h.dial)
	h.dial, h.cancel = 0, nil
}

// onDialed hands the terminal over, or toasts the refusal without leaving
// the alt screen.
func (h *Handover) onDialed(d DialedMsg) tea.Cmd {
	if d.Dial == 0 || d.Dial != h.dial {
		return closeSession(d.Session) // cancelled meanwhile
	}
	h.endDial()
	if d.Err != nil {
		if errors.Is(d.Err, context.Canceled) {
			return nil
		}
		if d.V2 == nil && !d.Watch { // the workspace's shell route refused: remembered
			h.remember(d.Err)
		}
		return h.host.ErrorToast("shell on "+d.WSName+": "+errtext.Sentence(d.Err, errtext.Subject{Workspace: d.WSName, Scope: "shell"}), d.Err)
	}
	cfg := h.c.Config
	cmd, err := h.command(d, NewOptions(d.WSName, cfg.ShellAbandonKey, cfg.ShellPauseOnExit))
	if err != nil {
		return tea.Batch(closeSession(d.Session), h.host.Toast(toast.LevelError, "shell: "+err.Error())) // never handed over
	}
	exited := ExitedMsg{WSID: d.WSID, WSName: d.WSName, Watch: d.Watch, ShellsKey: h.shellsKey()}
	var warn tea.Cmd
	if d.V2 != nil {
		exited.ShellID = d.V2.ShellID
		exited.Detached = time.Duration(d.V2.DetachedTimeoutSecs) * time.Second
		if err := h.keep.Keep(*d.V2); err != nil {
			warn = h.host.Toast(toast.LevelWarn, "the shell's secret was not kept ("+err.Error()+"): only this workbench can reattach to it")
		}
	}
	return tea.Batch(warn, tea.Exec(cmd, func(err error) tea.Msg {
		exited.Result, exited.Err = cmd.Result(), err
		return exited
	}))
}

// shellsKey is the key of the shells screen, or the palette's command
// when the operator bound it to none.
func (h *Handover) shellsKey() string {
	if k := h.c.Keys.Action(keys.AllShells).FirstKey(); k != "" {
		return k
	}
	return ":shells"
}

// command is what tea.Exec runs for the dialed session: a v2 shell's
// reattaches by itself after a lost connection.
func (h *Handover) command(d DialedMsg, o Options) (Command, error) {
	if d.Watch {
		o.Workspace += " (watching, read-only)"
		o.Resumable, o.ResumeHint = true, "you were only watching"
	}
	if d.V2 == nil {
		return h.factory(d.Session, o)
	}
	o.ResumeHint = "the shells screen (" + h.shellsKey() + ") lists it"
	b, ctx, info := h.backend, h.ctx, *d.V2
	detached := time.Duration(info.DetachedTimeoutSecs) * time.Second
	if detached <= 0 {
		detached = ptyshell.DefaultDetached // a kept secret does not say; the server's refusal ends the retries
	}
	sized := &sizedCommand{}
	again := func(lostAt time.Time) (*ptyshell.Session, error) {
		return b.ReattachShell(ctx, info.ShellID, info.Secret, lostAt, detached, sized.Size)
	}
	cmd, err := Resuming(h.factory, d.Session, o, again)
	if err != nil {
		return nil, err
	}
	sized.Command = cmd
	return sized, nil
}

// TerminalSize is the size of the terminal the shell runs on: stdout's,
// as ptyshell's Terminal reads it.
func TerminalSize() (ptyshell.Size, error) { return sizeOf(os.Stdout) }

func sizeOf(f interface{ Fd() uintptr }) (ptyshell.Size, error) {
	cols, rows, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return ptyshell.Size{}, err
	}
	return ptyshell.Size{Cols: cols, Rows: rows}.Clamp(), nil
}

// sizedCommand remembers the terminal tea.Exec hands the shell, so that a
// reattach asks that terminal for its size: the program's own output,
// which is stdout locally but an SSH session's PTY in a server.
type sizedCommand struct {
	Command
	out interface{ Fd() uintptr }
}

func (c *sizedCommand) SetStdout(w io.Writer) {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		c.out = f
	}
	c.Command.SetStdout(w)
}

// Size is the size of the terminal the shell was given, or stdout's
// before it was given one.
func (c *sizedCommand) Size() (ptyshell.Size, error) {
	if c.out == nil {
		return TerminalSize()
	}
	return sizeOf(c.out)
}

// closeSession ends a session that is not handed over, in a Cmd: Close
// waits up to a second for the server's close frame, and Update never
// blocks.
func closeSession(s *ptyshell.Session) tea.Cmd {
	if s == nil {
		return nil
	}
	return func() tea.Msg {
		_ = s.Close() // Close always returns nil
		return nil
	}
}

// remember keeps s disabled after a 403, or a 404/501 from the shell
// endpoint.
func (h *Handover) remember(err error) {
	e, ok := errors.AsType[*cairn.Error](err)
	if !ok {
		return
	}
	switch {
	case e.Reason == cairn.ReasonForbidden:
		h.blocked = "this token lacks the shell scope"
	case e.Reason == cairn.ReasonShellDisabled:
		h.blocked = errtext.Sentence(err, errtext.Subject{})
	case e.Status == http.StatusNotFound && e.Reason != cairn.ReasonWorkspaceNotFound,
		e.Status == http.StatusNotImplemented:
		h.blocked = "this server has no shell endpoint (shell.enable is off)"
	}
}

// End is how a shell's end reads as a toast: a missing EXIT is never
// shown as 0.
func End(x ExitedMsg) (toast.Level, string) {
	r := x.Result
	switch {
	case errors.Is(x.Err, ptyshell.ErrNotTerminal):
		return toast.LevelError, "a shell needs a terminal (stdin and stdout)"
	case r.Ending == ptyshell.EndExit && (r.Exit.Reason == ptyshell.ReasonExited || r.Exit.Reason == ""):
		return toast.LevelInfo, fmt.Sprintf("shell exited: status %d (%s)", r.Exit.ExitCode, x.WSName)
	case r.Ending == ptyshell.EndExit:
		text := r.Summary()
		text = text[len("[cairn: ") : len(text)-1]
		return toast.LevelWarn, fmt.Sprintf("shell on %s %s", x.WSName, trimShell(text))
	case r.Ending == ptyshell.EndDetach, r.Ending == ptyshell.EndSignal:
		return left(x)
	case r.Ending == ptyshell.EndLost:
		return toast.LevelError, "shell on " + x.WSName + " lost its connection (no exit status)"
	case x.Err != nil:
		return toast.LevelError, "shell on " + x.WSName + ": " + x.Err.Error()
	}
	return toast.LevelError, "shell on " + x.WSName + " ended without an exit status"
}

// left is the toast of a session the operator left, by the detach key or
// a signal to the TUI: a watch leaves the shell as it was; a v2 shell
// runs on without a writer, to be attached to again, until its detached
// timeout ends it; a v1 shell ends with its connection.
func left(x ExitedMsg) (toast.Level, string) {
	level, on := toast.LevelInfo, ""
	if x.Result.Ending == ptyshell.EndSignal {
		level, on = toast.LevelWarn, fmt.Sprintf(" on %v", x.Result.Signal)
	}
	switch {
	case x.Watch:
		return level, "stopped watching the shell on " + x.WSName + on + " — it goes on"
	case x.ShellID != "":
		ends := "the server's detached timeout"
		if x.Detached > 0 {
			ends = span(x.Detached) + " detached"
		}
		return level, fmt.Sprintf("detached from the shell on %s%s: it keeps running — %s lists it to attach again — and ends after %s",
			x.WSName, on, x.ShellsKey, ends)
	}
	return level, "left the shell on " + x.WSName + on + "; the server ends it"
}

// span renders a timeout as "5m", "1h30m" or "45s": Duration's String
// without its zero minutes and seconds.
func span(d time.Duration) string {
	s := d.Round(time.Second).String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
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
