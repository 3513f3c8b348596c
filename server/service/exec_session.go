package service

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/wsexec"
)

// ExecSession is one opened exec whose container exists but has not
// started: Run serves it, or Abort tears it down.
type ExecSession struct {
	x        *Execs
	e        *execEntry
	ws       *cairn.Workspace
	proc     wsexec.Process
	openedAt time.Time
	// life is the session's context, detached from the request; Shutdown
	// cancels it with wsexec.ErrServerShutdown.
	life    context.Context
	audited bool // the EXEC_STARTED row was written
}

// ID is the exec's ID.
func (es *ExecSession) ID() string { return es.e.id }

// Run serves the session with serve — wsexec.Serve bound to the upgraded
// connection, which closes the process (the teardown) before it returns —
// then records the end: the registry entry and its cap slot go and the
// EXEC_ENDED row is written.
func (es *ExecSession) Run(serve func(ctx context.Context, proc wsexec.Process, opts wsexec.ServeOptions) wsexec.ServeResult) {
	res := serve(es.life, es.proc, es.options())
	es.finish(res)
}

// Abort tears down a session whose upgrade failed; no row was written.
func (es *ExecSession) Abort() {
	if err := es.proc.Close(); err != nil {
		es.x.log.Error("exec teardown failed", "exec_id", es.e.id, "err", err)
	}
	es.x.remove(es.e)
	close(es.e.done)
	es.e.cancel(errors.New("upgrade failed"))
}

func (es *ExecSession) options() wsexec.ServeOptions {
	c := es.x.cfg
	return wsexec.ServeOptions{
		MaxLifetime: c.MaxLifetime, OpenTimeout: c.OpenTimeout, PingInterval: c.PingInterval,
		PongWait: c.PongWait, WriteWait: c.WriteWait, StopTimeout: c.StopTimeout + 10*time.Second,
		DrainTimeout: c.DrainTimeout, Logger: es.x.log, Starting: es.starting,
	}
}

// starting writes the EXEC_STARTED row before the command starts: a
// command that cannot be audited does not run. argv[0] is recorded, never
// the rest of the argv, which may hold secrets.
func (es *ExecSession) starting(ctx context.Context) error {
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	err := es.x.svc.audit(actx, es.x.svc.store, cairn.AuditExecStarted, map[string]any{
		"workspace_id": es.ws.ID, "workspace_name": es.ws.Name, "exec_id": es.e.id,
		"container": es.e.container, "token_name": es.e.tokenName, "client_addr": es.e.clientAddr,
		"argv0": es.e.argv0, "argc": es.e.argc,
	})
	if err != nil {
		es.x.log.Error("exec audit failed; the command does not run", "exec_id", es.e.id, "err", err)
		return err
	}
	es.audited = true
	es.x.log.Info("exec started", es.attrs()...)
	return nil
}

// attrs identify the session in its log lines; no argv value is logged.
func (es *ExecSession) attrs() []any {
	return []any{"exec_id", es.e.id, "workspace_id", es.ws.ID, "token_name", es.e.tokenName,
		"client_addr", es.e.clientAddr, "argc", es.e.argc}
}

// finish records the end of a served session.
func (es *ExecSession) finish(res wsexec.ServeResult) {
	es.x.remove(es.e)
	defer close(es.e.done)
	es.e.cancel(errExecEnded)
	took := time.Since(es.openedAt)
	actx, cancel := context.WithTimeout(context.WithoutCancel(es.life), auditTimeout)
	defer cancel()
	if es.audited {
		meta := map[string]any{
			"workspace_id": es.ws.ID, "workspace_name": es.ws.Name, "exec_id": es.e.id,
			"container": es.e.container, "argv0": es.e.argv0, "reason": string(res.Reason),
			"exit_code": res.ExitCode, "duration_s": took.Seconds(), "bytes_in": res.BytesIn, "bytes_out": res.BytesOut,
		}
		if err := es.x.svc.audit(actx, es.x.svc.store, cairn.AuditExecEnded, meta); err != nil {
			es.x.log.Error("exec audit failed", "exec_id", es.e.id, "err", err)
		}
	}
	attrs := append(es.attrs(), "reason", string(res.Reason), "exit_code", res.ExitCode,
		"duration", took, "bytes_in", res.BytesIn, "bytes_out", res.BytesOut)
	if res.Err != nil && res.Reason == wsexec.ReasonError {
		attrs = append(attrs, "err", res.Err)
	}
	es.x.log.Log(actx, slog.LevelInfo, "exec ended", attrs...)
}
