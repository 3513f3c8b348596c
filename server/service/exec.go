package service

import (
	"context"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/wsexec"
)

// Execs holds the rules of `cairn exec`: those every container session
// shares with the shell (containerSessions), under the shell's settings
// with caps counted apart, and the exec's own: its runtime, and a reaper
// that also takes what expired. An exec has no idle end.
type Execs struct {
	containerSessions[*execEntry]
	rt ExecRuntime
	// process tells this process's registry rows from a predecessor's
	// under the same instance name.
	process string
	// renewing is the liveness renewal's context; stopRenewing ends it,
	// once the execs have ended.
	renewing     context.Context
	stopRenewing context.CancelFunc
}

// execEntry is one live exec in the registry.
type execEntry struct {
	registration
	argv0 string
	argc  int
}

// execKind names the exec in the rules it shares with the shell.
var execKind = sessionKind{name: "exec", plural: "execs", idKey: "exec_id",
	disabled:  "exec needs the shell, which is disabled on this server; an operator enables it with shell.enable",
	retry:     "run the command again shortly",
	freeSlot:  "wait for one to end",
	unaudited: "the command does not run"}

// NewExecs returns the exec rules over svc's store and runtime and the
// exec runtime rt, under the shell's settings cfg.
func NewExecs(svc *Service, rt ExecRuntime, cfg SessionConfig) *Execs {
	x := &Execs{containerSessions: newContainerSessions[*execEntry](svc, execKind, cfg.withDefaults(),
		rt.ListExecs, rt.RemoveContainer), rt: rt, process: ulid.Make().String()}
	x.renewing, x.stopRenewing = context.WithCancel(context.Background())
	return x
}

// OpenExec checks the request, the workspace and the caps, and creates
// the command's container, not started. The session is in the registry
// and holds a cap slot; Run serves it, or Abort tears it down when the
// upgrade fails. Reasons: shell_disabled, server_shutting_down,
// invalid_parameters, workspace_not_found, too_many_shells,
// volume_not_ready, volume_missing, workspace_busy, docker_unavailable,
// shell_image_missing, internal.
func (x *Execs) OpenExec(ctx context.Context, o cairn.ExecOpen) (*ExecSession, error) {
	openedAt := time.Now()
	if err := x.Admit(); err != nil {
		return nil, err
	}
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "the command is empty")
	}
	if o.Timeout < 0 || o.Timeout > x.config.MaxLifetime {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters,
			"the timeout must be between 0 and the maximum lifetime of %s", x.config.MaxLifetime)
	}
	dir, err := x.svc.workDir(ctx, o.WorkspaceID, o.Dir)
	if err != nil {
		return nil, err
	}
	e, life, err := x.enter(ctx, o.WorkspaceID, o.ClientAddr, openedAt, func(r registration) *execEntry {
		return &execEntry{registration: r, argv0: o.Argv[0], argc: len(o.Argv)}
	})
	if err != nil {
		return nil, err
	}
	// The row comes before the container, so no container runs unregistered.
	if err := x.svc.store.InsertExec(ctx, &ExecRow{ID: e.id, WorkspaceID: e.workspaceID, Container: e.container,
		TokenName: e.tokenName, ClientAddr: e.clientAddr, Instance: x.config.Instance, Process: x.process,
		Argv0: e.argv0}); err != nil {
		x.leave(&e.registration, err)
		return nil, err
	}
	proc, err := createOnReady(ctx, &x.containerSessions, e, func(ctx context.Context, ws *cairn.Workspace) (wsexec.Process, error) {
		return x.rt.CreateExec(ctx, ExecSpec{Name: e.container, ExecID: e.id, WorkspaceID: ws.ID,
			WorkspaceName: ws.Name, VolumeName: ws.VolumeName, TokenName: e.tokenName, Argv: o.Argv,
			Dir: dir, Env: o.Env, Expires: x.svc.now().Add(x.config.MaxLifetime)})
	})
	if err != nil {
		x.dropRow(ctx, e.id)
		return nil, err
	}
	return &ExecSession{x: x, e: e, proc: proc, life: life, timeout: o.Timeout}, nil
}

// dropRow deletes an exec's registry row once its container is gone, and
// reports whether this delete took it: false when another replica ended
// the exec first (it took this server for gone), and then that replica
// records its end. A failed delete counts as taken — the end is recorded
// here; the row left behind is a leftover for the reaper.
func (x *Execs) dropRow(ctx context.Context, id string) bool {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), auditTimeout)
	defer cancel()
	deleted, err := x.svc.store.DeleteExec(dctx, id)
	if err != nil {
		x.log.Error("drop exec registry row", "exec_id", id, "err", err)
		return true
	}
	return deleted
}
