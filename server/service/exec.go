package service

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/wsexec"
)

// ExecConfig holds the exec rules' settings. They are the shell's
// (shell.*): an exec exists only with the shell enabled, counts against
// the same caps (with a counter of its own) and runs under the same
// timeouts, the maximum lifetime included; it has no idle end.
type ExecConfig struct {
	Enabled                 bool
	Instance                string        // cairn.instance of this server's exec containers
	MaxSessions             int           // per process; default 16
	MaxSessionsPerWorkspace int           // per process; default 4
	OpenTimeout             time.Duration // default 30 s
	MaxLifetime             time.Duration // default 8 h
	PingInterval            time.Duration
	PongWait                time.Duration
	WriteWait               time.Duration
	StopTimeout             time.Duration // stopSecs; default 3 s
	DrainTimeout            time.Duration
	ReapInterval            time.Duration // default 60 s
	Logger                  *slog.Logger
}

// Execs holds the rules of `cairn exec` (ARCHITECTURE §11.6): the
// workspace checks, the shared volume lock until the container exists,
// the caps, the registry of this process's live execs, audit, shutdown
// and the reaper of exec containers.
type Execs struct {
	svc *Service
	rt  ExecRuntime
	cfg ExecConfig
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]*execEntry
	perWS   map[string]int
	closing bool
}

// execEntry is one live exec in the registry.
type execEntry struct {
	id, workspaceID, container string
	tokenName, clientAddr      string
	argv0                      string
	argc                       int
	cancel                     context.CancelCauseFunc
	done                       chan struct{} // closed once the end is recorded
}

// NewExecs returns the exec rules over svc's store and runtime and the
// exec runtime rt.
func NewExecs(svc *Service, rt ExecRuntime, cfg ExecConfig) *Execs {
	cfg.MaxSessions = cmp.Or(cfg.MaxSessions, 16)
	cfg.MaxSessionsPerWorkspace = cmp.Or(cfg.MaxSessionsPerWorkspace, 4)
	cfg.OpenTimeout = cmp.Or(cfg.OpenTimeout, 30*time.Second)
	cfg.MaxLifetime = cmp.Or(cfg.MaxLifetime, 8*time.Hour)
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, 3*time.Second)
	cfg.ReapInterval = cmp.Or(cfg.ReapInterval, 60*time.Second)
	return &Execs{svc: svc, rt: rt, cfg: cfg, log: cmp.Or(cfg.Logger, svc.log),
		entries: map[string]*execEntry{}, perWS: map[string]int{}}
}

// Live counts this process's execs, opening ones included.
func (x *Execs) Live() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.entries)
}

// Admit answers the checks before the handshake's own. Reasons:
// shell_disabled, server_shutting_down.
func (x *Execs) Admit() error {
	if !x.cfg.Enabled {
		return cairn.Errorf(cairn.ReasonShellDisabled,
			"exec needs the shell, which is disabled on this server; an operator enables it with shell.enable")
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closing {
		return cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down; run the command again shortly")
	}
	return nil
}

// OpenExec checks the request, the workspace and the caps, and creates
// the command's container, not started. The session is in the registry
// and holds a cap slot; Run serves it, or Abort tears it down when the
// upgrade fails. Reasons: shell_disabled, server_shutting_down,
// invalid_parameters, workspace_not_found, too_many_shells,
// volume_not_ready, volume_missing, workspace_busy, docker_unavailable,
// shell_image_missing, internal.
func (x *Execs) OpenExec(ctx context.Context, o cairn.ExecOpen) (*ExecSession, error) {
	if err := x.Admit(); err != nil {
		return nil, err
	}
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "the command is empty")
	}
	ws, err := x.svc.store.FindWorkspace(ctx, o.WorkspaceID)
	if err != nil {
		return nil, err
	}
	token := ""
	if a := cairn.ActorFrom(ctx); a != nil {
		token = *a
	}
	life, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	id := ulid.Make().String()
	e := &execEntry{id: id, workspaceID: ws.ID, tokenName: token, clientAddr: o.ClientAddr,
		container: x.svc.appName + ".exec." + ws.ID + "." + id, argv0: o.Argv[0], argc: len(o.Argv),
		cancel: cancel, done: make(chan struct{})}
	if err := x.reserve(e); err != nil {
		cancel(err)
		return nil, err
	}
	proc, ws, err := x.create(ctx, e, o.Argv)
	if err != nil {
		x.remove(e)
		close(e.done)
		cancel(err)
		return nil, err
	}
	return &ExecSession{x: x, e: e, ws: ws, proc: proc, life: life, openedAt: time.Now()}, nil
}

// reserve enters e in the registry, taking its cap slots atomically with
// the check. Reasons: too_many_shells, server_shutting_down.
func (x *Execs) reserve(e *execEntry) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.closing:
		return cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down; run the command again shortly")
	case len(x.entries) >= x.cfg.MaxSessions:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"this server already runs %d execs, its limit (shell.limits.maxSessions); wait for one to end", len(x.entries))
	case x.perWS[e.workspaceID] >= x.cfg.MaxSessionsPerWorkspace:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"workspace %s already has %d execs on this server, its limit (shell.limits.maxSessionsPerWorkspace); wait for one to end",
			e.workspaceID, x.perWS[e.workspaceID])
	}
	x.entries[e.id] = e
	x.perWS[e.workspaceID]++
	return nil
}

func (x *Execs) remove(e *execEntry) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if _, ok := x.entries[e.id]; !ok {
		return
	}
	delete(x.entries, e.id)
	if x.perWS[e.workspaceID]--; x.perWS[e.workspaceID] <= 0 {
		delete(x.perWS, e.workspaceID)
	}
}

// create checks the volume under the workspace's shared lock until the
// container exists, as the shell does: a teardown in between would let
// Docker re-create the volume empty.
func (x *Execs) create(ctx context.Context, e *execEntry, argv []string) (wsexec.Process, *cairn.Workspace, error) {
	lctx, cancel := context.WithTimeout(ctx, x.cfg.OpenTimeout)
	defer cancel()
	release, err := x.svc.store.LockWorkspace(lctx, e.workspaceID, LockShared)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	ws, err := x.svc.store.FindWorkspace(lctx, e.workspaceID)
	if err != nil {
		return nil, nil, err
	}
	if ws.VolumeState != cairn.VolumeReady {
		return nil, nil, cairn.Errorf(cairn.ReasonVolumeNotReady,
			"workspace %s has no volume (volume state '%s'); set it up first", ws.Name, ws.VolumeState)
	}
	exists, err := x.svc.runtime.VolumeExists(lctx, ws.VolumeName)
	if err != nil {
		return nil, nil, err
	}
	if !exists {
		return nil, nil, cairn.Errorf(cairn.ReasonVolumeMissing,
			"the volume of workspace %s is missing in Docker; set the volume up again", ws.Name)
	}
	proc, err := x.rt.CreateExec(lctx, ExecSpec{Name: e.container, ExecID: e.id, WorkspaceID: ws.ID,
		WorkspaceName: ws.Name, VolumeName: ws.VolumeName, TokenName: e.tokenName, Argv: argv,
		Expires: x.svc.now().Add(x.cfg.MaxLifetime)})
	if err != nil {
		return nil, nil, err
	}
	return proc, ws, nil
}

// Shutdown ends every exec of this process with reason server_shutdown,
// refuses new ones, and force-removes the containers of whatever is left
// once ctx is done.
func (x *Execs) Shutdown(ctx context.Context) {
	x.mu.Lock()
	x.closing = true
	live := make([]*execEntry, 0, len(x.entries))
	for _, e := range x.entries {
		live = append(live, e)
	}
	x.mu.Unlock()
	for _, e := range live {
		e.cancel(wsexec.ErrServerShutdown)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), x.cfg.StopTimeout+10*time.Second)
	defer cancel()
	for _, e := range live {
		select {
		case <-e.done:
			continue
		case <-ctx.Done():
		}
		if err := x.rt.RemoveContainer(rctx, e.container); err != nil {
			x.log.Error("remove exec container at shutdown", "exec_id", e.id, "err", err)
		}
	}
}

// errExecEnded cancels a session's life once it is recorded.
var errExecEnded = errors.New("exec ended")
