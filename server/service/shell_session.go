package service

import (
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// auditTimeout bounds the write of one shell audit row.
const auditTimeout = 10 * time.Second

// ShellSession is one opened shell whose container exists but has not
// started: Run serves it, or Abort tears it down.
type ShellSession struct {
	s        *Shells
	e        *shellEntry
	ws       *cairn.Workspace
	open     cairn.ShellOpen
	stream   ptyshell.Stream
	openedAt time.Time
	// life is the session's context from open to end, detached from the
	// request that opened it; KillShell and Shutdown cancel it with a
	// cause (ptyshell.ErrTerminated, ptyshell.ErrServerShutdown).
	life context.Context

	// A v2 session's hub and the hash of its secret, set under Shells.mu
	// once it runs.
	hub    *ptyshell.Hub
	secret [sha256.Size]byte
	// rec is the session's recording, nil when it records none; set
	// before a v2 session's hub is made, or as a v1 session is served.
	rec *recording
}

// ID is the shell's ID.
func (ss *ShellSession) ID() string { return ss.e.id }

// Run serves the session with serve — ptyshell.Serve bound to the upgraded
// connection — which closes the stream (the teardown) before it returns,
// then records the end: the registry entry and its cap slot go, the
// SHELL_CLOSED audit row is written, the end is logged and counted (§7.5).
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
	if err := ss.stream.Close(); err != nil {
		ss.s.log.Error("shell teardown failed", "shell_id", ss.e.id, "err", err)
	}
	ss.s.remove(ss.e)
	close(ss.e.done)
	ss.e.cancel(errors.New("upgrade failed"))
	ss.s.cfg.OnOpen("upgrade_failed", 0)
}

func (ss *ShellSession) options() ptyshell.ServeOptions {
	c := ss.s.cfg
	return ptyshell.ServeOptions{
		Status: ptyshell.Status{ShellID: ss.e.id, Container: ss.e.container, WorkspaceID: ss.ws.ID,
			WorkspaceName: ss.ws.Name},
		Size:         ptyshell.Size{Cols: ss.open.Cols, Rows: ss.open.Rows},
		IdleTimeout:  c.IdleTimeout,
		IdleWarning:  c.IdleWarning,
		MaxLifetime:  c.MaxLifetime,
		PingInterval: c.PingInterval,
		PongWait:     c.PongWait,
		WriteWait:    c.WriteWait,
		OpenTimeout:  c.OpenTimeout,
		OpenedAt:     ss.openedAt,
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

// running records a started shell (§7.3 step 6): the SHELL_OPENED row
// first, since a shell that cannot be audited is not offered.
func (ss *ShellSession) running(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	err := ss.s.svc.audit(actx, ss.s.svc.store, cairn.AuditShellOpened, map[string]any{
		"workspace_id": ss.ws.ID, "workspace_name": ss.ws.Name, "shell_id": ss.e.id,
		"container": ss.e.container, "token_name": ss.e.tokenName, "client_addr": ss.e.clientAddr,
		"cols": ss.open.Cols, "rows": ss.open.Rows, "term": ss.open.Term,
	})
	if err != nil {
		ss.s.log.Error("shell audit failed; ending the shell", "shell_id", ss.e.id, "err", err)
		return err
	}
	ss.s.cfg.OnOpen("ok", time.Since(ss.openedAt))
	ss.s.log.Info("shell opened", ss.attrs()...)
	return nil
}

// attrs are the identity of the session in its log lines; terminal
// content is never logged.
func (ss *ShellSession) attrs() []any {
	return []any{"shell_id", ss.e.id, "workspace_id", ss.ws.ID, "token_name", ss.e.tokenName,
		"client_addr", ss.e.clientAddr}
}

// finish records the end of a served session.
func (ss *ShellSession) finish(res ptyshell.ServeResult) {
	ss.s.remove(ss.e)
	defer close(ss.e.done)
	ss.e.cancel(errors.New("shell ended"))
	took := time.Since(ss.openedAt)
	ss.s.mu.Lock()
	killedBy := ss.e.killedBy
	ss.s.mu.Unlock()

	meta := map[string]any{
		"workspace_id": ss.ws.ID, "workspace_name": ss.ws.Name, "shell_id": ss.e.id,
		"container": ss.e.container, "reason": string(res.Reason), "exit_code": res.ExitCode,
		"duration_s": took.Seconds(), "bytes_in": res.BytesIn, "bytes_out": res.BytesOut,
	}
	if res.Reason == ptyshell.ReasonTerminated && killedBy != "" {
		meta["killed_by"] = killedBy
	}
	// The row outlives the session's context, which is cancelled by now.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ss.life), auditTimeout)
	defer cancel()
	if err := ss.s.svc.audit(actx, ss.s.svc.store, cairn.AuditShellClosed, meta); err != nil {
		ss.s.log.Error("shell audit failed", "shell_id", ss.e.id, "err", err)
	}
	attrs := append(ss.attrs(), "reason", string(res.Reason), "exit_code", res.ExitCode,
		"duration", took, "bytes_in", res.BytesIn, "bytes_out", res.BytesOut)
	if res.Err != nil && res.Reason == ptyshell.ReasonError {
		attrs = append(attrs, "err", res.Err)
	}
	ss.s.log.Log(actx, slog.LevelInfo, "shell ended", attrs...)
	ss.s.cfg.OnEnd(string(res.Reason), res.BytesIn, res.BytesOut)
}
