package service

import (
	"cmp"
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

var _ cairn.ShellService = (*Shells)(nil)

// ShellConfig holds the shell rules' settings (shell.* of PTYSHELL.md §9);
// zero values take its defaults, except IdleTimeout, where zero disables
// the idle end.
type ShellConfig struct {
	Enabled bool
	// Instance is this server's cairn.instance (shell.instanceName): the
	// server-side reaper takes only containers carrying it.
	Instance                string
	MaxSessions             int           // per process; default 16
	MaxSessionsPerWorkspace int           // per process; default 4
	OpenTimeout             time.Duration // request → running; default 30 s
	IdleTimeout             time.Duration // no INPUT this long ends a shell; 0: never
	IdleWarning             time.Duration // default 60 s
	MaxLifetime             time.Duration // from running; default 8 h
	PingInterval            time.Duration // default 20 s
	PongWait                time.Duration // default 60 s
	WriteWait               time.Duration // default 10 s
	StopTimeout             time.Duration // stopSecs; default 3 s
	DrainTimeout            time.Duration // default 2 s
	ReapInterval            time.Duration // default 60 s
	// Detached ends a v2 shell this long after its writer left
	// (shell.timeouts.detachedSecs; default 300 s).
	Detached time.Duration
	// NewScreen makes a v2 shell's virtual terminal, whose render starts
	// every attach and watch. Nil keeps none: an attach then shows live
	// output only, and output produced while detached is not replayed.
	NewScreen func(cols, rows int) ptyshell.Screen
	// Record is shell.record: the asciicast recording of v2 shells.
	Record ShellRecording
	Logger *slog.Logger
	// Seams for metrics; nil hooks are skipped. OnOpen sees every open:
	// "ok" once running (took is request → running), else the reason it
	// was refused or failed. OnEnd sees every end with its reason and
	// bytes; OnReap every container a reaper removed.
	OnOpen func(result string, took time.Duration)
	OnEnd  func(reason string, bytesIn, bytesOut int64)
	OnReap func(by string, n int)
}

// Shells holds the shell rules (PTYSHELL.md §3.2 rows 5–16, §7): the
// workspace checks, the shared volume lock until the container exists, the
// caps, the registry of this process's live shells, audit, list and kill,
// shutdown and the server-side reaper.
type Shells struct {
	svc *Service
	rt  ShellRuntime
	cfg ShellConfig
	log *slog.Logger

	mu      sync.Mutex
	entries map[string]*shellEntry
	perWS   map[string]int
	closing bool
}

// shellEntry is one live shell in the registry, from the open's checks
// until its teardown's audit row is written.
type shellEntry struct {
	id, workspaceID, container string
	tokenName, clientAddr      string
	startedAt                  time.Time
	// cancel ends the session: the cause selects the reason (§7.4).
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the end is recorded

	// Guarded by Shells.mu.
	lastInput time.Time
	killedBy  string
	// sess is set for a v2 session (CreateShell), which attaches.
	sess *ShellSession
}

// NewShells returns the shell rules over svc's store and runtime and the
// shell runtime rt; svc's volume teardown then names the open shells that
// block it.
func NewShells(svc *Service, rt ShellRuntime, cfg ShellConfig) *Shells {
	cfg.MaxSessions = cmp.Or(cfg.MaxSessions, 16)
	cfg.MaxSessionsPerWorkspace = cmp.Or(cfg.MaxSessionsPerWorkspace, 4)
	cfg.OpenTimeout = cmp.Or(cfg.OpenTimeout, ptyshell.DefaultOpenTimeout)
	cfg.MaxLifetime = cmp.Or(cfg.MaxLifetime, ptyshell.DefaultMaxLifetime)
	cfg.StopTimeout = cmp.Or(cfg.StopTimeout, 3*time.Second)
	cfg.ReapInterval = cmp.Or(cfg.ReapInterval, 60*time.Second)
	if cfg.OnOpen == nil {
		cfg.OnOpen = func(string, time.Duration) {}
	}
	if cfg.OnEnd == nil {
		cfg.OnEnd = func(string, int64, int64) {}
	}
	if cfg.OnReap == nil {
		cfg.OnReap = func(string, int) {}
	}
	s := &Shells{
		svc: svc, rt: rt, cfg: cfg,
		log:     cmp.Or(cfg.Logger, svc.log),
		entries: map[string]*shellEntry{},
		perWS:   map[string]int{},
	}
	svc.openShells = s.shellsOf
	return s
}

// Enabled reports shell.enable.
func (s *Shells) Enabled() bool { return s.cfg.Enabled }

// Live counts this process's shells, opening ones included.
func (s *Shells) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Admit answers the checks that come before the handshake's own (§3.2 rows
// 5 and 6). Reasons: shell_disabled, server_shutting_down.
func (s *Shells) Admit() error {
	if !s.cfg.Enabled {
		return cairn.Errorf(cairn.ReasonShellDisabled,
			"the shell is disabled on this server; an operator enables it with shell.enable")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down; open the shell again shortly")
	}
	return nil
}

// OpenShell runs the checks of §3.2 rows 5 and 6 and 9–16 and creates the
// shell's container, not started (§7.3 step 1). The returned session is in
// the registry and holds a cap slot; Run serves it, or Abort tears it down
// when the upgrade fails. Reasons: shell_disabled, server_shutting_down,
// invalid_terminal, workspace_not_found, too_many_shells, volume_not_ready,
// volume_missing, workspace_busy, docker_unavailable, shell_image_missing,
// internal.
func (s *Shells) OpenShell(ctx context.Context, o cairn.ShellOpen) (*ShellSession, error) {
	openedAt := time.Now()
	sess, err := s.open(ctx, o, openedAt)
	if err != nil {
		s.cfg.OnOpen(string(cairn.ErrorReason(err)), 0)
		return nil, err
	}
	return sess, nil
}

func (s *Shells) open(ctx context.Context, o cairn.ShellOpen, openedAt time.Time) (*ShellSession, error) {
	if err := s.Admit(); err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ws, err := s.svc.store.FindWorkspace(ctx, o.WorkspaceID)
	if err != nil {
		return nil, err
	}
	token := ""
	if a := cairn.ActorFrom(ctx); a != nil {
		token = *a
	}
	// The session outlives the request that opened it; it keeps the
	// request's values (the actor) for its audit rows.
	life, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	id := ulid.Make().String()
	e := &shellEntry{
		id: id, workspaceID: ws.ID, tokenName: token, clientAddr: o.ClientAddr,
		// The sidecars' naming scheme (§7.2): a leftover never collides
		// with a new shell.
		container: s.svc.appName + ".shell." + ws.ID + "." + id,
		startedAt: s.svc.now(), cancel: cancel, done: make(chan struct{}),
	}
	if err := s.reserve(e); err != nil {
		cancel(err)
		return nil, err
	}
	stream, ws, err := s.create(ctx, e, o)
	if err != nil {
		s.remove(e)
		close(e.done)
		cancel(err)
		return nil, err
	}
	return &ShellSession{s: s, e: e, ws: ws, open: o, stream: stream, openedAt: openedAt, life: life}, nil
}

// reserve enters e in the registry in state opening, taking its cap slots
// atomically with the check (§7.6). Reasons: too_many_shells,
// server_shutting_down.
func (s *Shells) reserve(e *shellEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closing:
		return cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down; open the shell again shortly")
	case len(s.entries) >= s.cfg.MaxSessions:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"this server already runs %d shells, its limit (shell.limits.maxSessions); close one first", len(s.entries))
	case s.perWS[e.workspaceID] >= s.cfg.MaxSessionsPerWorkspace:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"workspace %s already has %d shells on this server, its limit (shell.limits.maxSessionsPerWorkspace); close one first",
			e.workspaceID, s.perWS[e.workspaceID])
	}
	s.entries[e.id] = e
	s.perWS[e.workspaceID]++
	return nil
}

// remove takes e out of the registry and frees its slots.
func (s *Shells) remove(e *shellEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.entries[e.id]; !ok {
		return
	}
	delete(s.entries, e.id)
	if s.perWS[e.workspaceID]--; s.perWS[e.workspaceID] <= 0 {
		delete(s.perWS, e.workspaceID)
	}
}

// create runs rows 12–16 under the workspace's shared lock, from the READY
// check until the container exists: a volume teardown (exclusive) landing
// in between would let Docker re-create the volume empty. Once the
// container mounts it, Docker itself refuses the removal.
func (s *Shells) create(ctx context.Context, e *shellEntry, o cairn.ShellOpen) (ptyshell.Stream, *cairn.Workspace, error) {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.OpenTimeout)
	defer cancel()
	release, err := s.svc.store.LockWorkspace(lctx, e.workspaceID, LockShared)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	ws, err := s.svc.store.FindWorkspace(lctx, e.workspaceID)
	if err != nil {
		return nil, nil, err
	}
	if ws.VolumeState != cairn.VolumeReady {
		return nil, nil, cairn.Errorf(cairn.ReasonVolumeNotReady,
			"workspace %s has no volume (volume state '%s'); set it up first", ws.Name, ws.VolumeState)
	}
	exists, err := s.svc.runtime.VolumeExists(lctx, ws.VolumeName)
	if err != nil {
		return nil, nil, err
	}
	if !exists {
		return nil, nil, cairn.Errorf(cairn.ReasonVolumeMissing,
			"the volume of workspace %s is missing in Docker; set the volume up again", ws.Name)
	}
	stream, err := s.rt.CreateShell(lctx, ShellSpec{
		Name: e.container, ShellID: e.id, WorkspaceID: ws.ID, WorkspaceName: ws.Name, VolumeName: ws.VolumeName,
		TokenName: e.tokenName, Term: o.Term, Cols: o.Cols, Rows: o.Rows,
		Expires: s.svc.now().Add(s.cfg.MaxLifetime),
	})
	if err != nil {
		return nil, nil, err
	}
	return stream, ws, nil
}
