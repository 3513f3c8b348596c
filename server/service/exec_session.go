package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/wsexec"
)

// ExecSession is one opened exec whose container exists but has not
// started: Run serves it, or Abort tears it down.
type ExecSession struct {
	x    *Execs
	e    *execEntry
	proc wsexec.Process
	// life is the session's context, detached from the request; Shutdown
	// cancels it with wsexec.ErrServerShutdown.
	life    context.Context
	audited bool          // the EXEC_STARTED row was written
	timeout time.Duration // the request's, 0 for none
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
	es.x.dropRow(es.life, es.e.id) // before the registry forgets it: see endLost
	es.x.abort(&es.e.registration, es.proc.Close)
}

func (es *ExecSession) options() wsexec.ServeOptions {
	c := es.x.config
	return wsexec.ServeOptions{
		MaxLifetime: c.MaxLifetime, Timeout: es.timeout, OpenTimeout: c.OpenTimeout, PingInterval: c.PingInterval,
		PongWait: c.PongWait, WriteWait: c.WriteWait, StopTimeout: c.StopTimeout + 10*time.Second,
		DrainTimeout: c.DrainTimeout, Logger: es.x.log, Starting: es.starting,
	}
}

// starting writes the EXEC_STARTED row before the command starts: a
// command that cannot be audited does not run. argv[0] is recorded, never
// the rest of the argv, which may hold secrets.
func (es *ExecSession) starting(ctx context.Context) error {
	err := es.x.auditStart(ctx, cairn.AuditExecStarted, &es.e.registration, map[string]any{
		"argv0": es.e.argv0, "argc": es.e.argc,
	})
	if err != nil {
		return err
	}
	es.audited = true
	// A replica that ends this exec for a lost server writes its end only
	// if its start is on record.
	if err := es.x.svc.store.SetExecStarted(ctx, es.e.id); err != nil {
		es.x.log.Error("exec registry failed; the command does not run", append(es.attrs(), "err", err)...)
		return err
	}
	es.x.log.Info("exec started", es.attrs()...)
	return nil
}

// attrs identify the session in its log lines; no argv value is logged.
func (es *ExecSession) attrs() []any {
	return append(es.x.attrs(&es.e.registration), "argc", es.e.argc)
}

// finish records the end of a served session. Its registry row goes
// first: the one delete that takes it decides who writes EXEC_ENDED, this
// server or a replica that took it for gone. Without an EXEC_STARTED row
// there is no EXEC_ENDED either.
func (es *ExecSession) finish(res wsexec.ServeResult) {
	defer close(es.e.done)
	typ := cairn.AuditExecEnded
	if !es.x.dropRow(es.life, es.e.id) || !es.audited {
		typ = ""
	}
	end := sessionEnd{reason: res.Reason, exitCode: res.ExitCode, bytesIn: res.BytesIn, bytesOut: res.BytesOut, err: res.Err}
	es.x.recordEnd(es.life, &es.e.registration, end, typ, map[string]any{"argv0": es.e.argv0}, es.attrs())
}
