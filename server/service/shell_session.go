package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// ShellSession is one opened shell whose container exists but has not
// started: Run serves it, or Abort tears it down.
type ShellSession struct {
	s      *Shells
	e      *shellEntry
	open   cairn.ShellOpen
	stream ptyshell.Stream
	// life is the session's context from open to end, detached from the
	// request that opened it; KillShell and Shutdown cancel it with a
	// cause (ptyshell.ErrTerminated, ptyshell.ErrServerShutdown).
	life context.Context

	// rec is the session's recording, nil when it records none; set as the
	// session is served.
	rec *recording
}

// ID is the shell's ID.
func (ss *ShellSession) ID() string { return ss.e.id }

// Run serves the session with serve — ptyshell.Serve bound to the upgraded
// connection — which closes the stream (the teardown) before it returns,
// then records the end: the registry entry and its cap slot go, the
// SHELL_CLOSED audit row is written, the end is logged and counted.
// ctx, as serve receives it, is cancelled with a cause by KillShell and
// Shutdown.
func (ss *ShellSession) Run(serve func(ctx context.Context, stream ptyshell.Stream, opts ptyshell.ServeOptions) ptyshell.ServeResult) {
	ss.startRecording(time.Now())
	res := serve(ss.life, ss.rec.wrap(ss.stream), ss.options())
	ss.keepRecording(res.Reason)
	ss.finish(res)
}

// Abort tears down a session whose upgrade failed: there is nobody to
// serve, and no SHELL_OPENED row was written.
func (ss *ShellSession) Abort() {
	ss.s.abort(&ss.e.registration, ss.stream.Close)
	ss.s.cfg.OnOpen("upgrade_failed", 0)
}

func (ss *ShellSession) options() ptyshell.ServeOptions {
	c := ss.s.cfg
	return ptyshell.ServeOptions{
		Status: ptyshell.Status{ShellID: ss.e.id, Container: ss.e.container, WorkspaceID: ss.e.ws.ID,
			WorkspaceName: ss.e.ws.Name},
		Size:         ptyshell.Size{Cols: ss.open.Cols, Rows: ss.open.Rows},
		IdleTimeout:  c.IdleTimeout,
		IdleWarning:  c.IdleWarning,
		MaxLifetime:  c.MaxLifetime,
		PingInterval: c.PingInterval,
		PongWait:     c.PongWait,
		WriteWait:    c.WriteWait,
		OpenTimeout:  c.OpenTimeout,
		OpenedAt:     ss.e.openedAt,
		StopTimeout:  c.StopTimeout + 10*time.Second,
		DrainTimeout: c.DrainTimeout,
		Logger:       ss.s.log,
		Running:      ss.running,
		OnInput: func(at time.Time, _ int) {
			ss.s.mu.Lock()
			ss.e.lastInput = at
			ss.s.mu.Unlock()
		},
	}
}

// running records a started shell: the SHELL_OPENED row
// first, since a shell that cannot be audited is not offered.
func (ss *ShellSession) running(ctx context.Context) error {
	err := ss.s.auditStart(ctx, cairn.AuditShellOpened, &ss.e.registration, map[string]any{
		"cols": ss.open.Cols, "rows": ss.open.Rows, "term": ss.open.Term,
	})
	if err != nil {
		return err
	}
	ss.s.cfg.OnOpen("ok", time.Since(ss.e.openedAt))
	ss.s.log.Info("shell opened", ss.attrs()...)
	return nil
}

// attrs are the identity of the session in its log lines; terminal
// content is never logged.
func (ss *ShellSession) attrs() []any { return ss.s.attrs(&ss.e.registration) }

// finish records the end of a served session: the SHELL_CLOSED row names
// who killed it, the end is counted, and only then is it recorded (done).
func (ss *ShellSession) finish(res ptyshell.ServeResult) {
	defer close(ss.e.done)
	ss.s.mu.Lock()
	killedBy := ss.e.killedBy
	ss.s.mu.Unlock()
	var own map[string]any
	if res.Reason == ptyshell.ReasonTerminated && killedBy != "" {
		own = map[string]any{"killed_by": killedBy}
	}
	end := sessionEnd{reason: res.Reason, exitCode: res.ExitCode, bytesIn: res.BytesIn, bytesOut: res.BytesOut, err: res.Err}
	ss.s.recordEnd(ss.life, &ss.e.registration, end, cairn.AuditShellClosed, own, ss.attrs())
	ss.s.cfg.OnEnd(string(res.Reason), res.BytesIn, res.BytesOut)
}
