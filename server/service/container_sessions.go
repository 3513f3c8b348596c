package service

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
)

// auditTimeout bounds the write of one session audit row.
const auditTimeout = 10 * time.Second

// SessionConfig holds the settings every container session runs under,
// a shell or an exec: they are the shell's (shell.*), since an exec exists
// only with the shell enabled. Zero values take the defaults.
type SessionConfig struct {
	Enabled bool
	// Instance is this server's cairn.instance (shell.instanceName): the
	// server-side reapers take only containers carrying it.
	Instance                string
	MaxSessions             int           // per process and kind; default 16
	MaxSessionsPerWorkspace int           // per process and kind; default 4
	OpenTimeout             time.Duration // request → running; default 30 s
	MaxLifetime             time.Duration // from running; default 8 h
	PingInterval            time.Duration // default 20 s
	PongWait                time.Duration // default 60 s
	WriteWait               time.Duration // default 10 s
	StopTimeout             time.Duration // stopSecs; default 3 s
	DrainTimeout            time.Duration // default 2 s
	ReapInterval            time.Duration // default 60 s
	Logger                  *slog.Logger
}

func (c SessionConfig) withDefaults() SessionConfig {
	c.MaxSessions = cmp.Or(c.MaxSessions, 16)
	c.MaxSessionsPerWorkspace = cmp.Or(c.MaxSessionsPerWorkspace, 4)
	c.OpenTimeout = cmp.Or(c.OpenTimeout, ptyshell.DefaultOpenTimeout)
	c.MaxLifetime = cmp.Or(c.MaxLifetime, ptyshell.DefaultMaxLifetime)
	c.StopTimeout = cmp.Or(c.StopTimeout, 3*time.Second)
	c.ReapInterval = cmp.Or(c.ReapInterval, 60*time.Second)
	return c
}

// sessionKind is what tells shells and execs apart in the rules they
// share: their names and the words of their refusals and log lines.
type sessionKind struct {
	name   string // "shell": the container names' middle part, log lines
	plural string // "shells": the caps' refusals
	idKey  string // "shell_id": the session's ID in audit rows and logs
	// disabled is the shell_disabled refusal; retry and freeSlot end the
	// server_shutting_down and too_many_shells ones.
	disabled, retry, freeSlot string
	// unaudited ends the log line of a start that could not be audited.
	unaudited string
}

// registration is one live session's place in its kind's registry, from
// the open's checks until its end is recorded.
type registration struct {
	id, workspaceID, container string
	tokenName, clientAddr      string
	openedAt                   time.Time // when the request arrived
	// ws is the workspace as read under its lock, set once the container
	// exists.
	ws *cairn.Workspace
	// cancel ends the session: the cause selects the reason.
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the end is recorded
}

func (r *registration) registered() *registration { return r }

// registered is a kind's registry entry: its registration and what the
// kind keeps beside it.
type registered interface{ registered() *registration }

// containerSessions is the part of the rules that shells and execs share,
// each kind with a registry of its own: the admission, the caps, the
// workspace checks and the shared volume lock until the container exists,
// the rows a session starts and ends with, shutdown and the reaper of
// leftover containers. E is the kind's registry entry.
type containerSessions[E registered] struct {
	svc    *Service
	kind   sessionKind
	config SessionConfig
	log    *slog.Logger
	// listContainers lists the kind's containers of the app;
	// removeContainer force-removes one (an absent one is no error).
	listContainers  func(ctx context.Context) ([]ShellContainer, error)
	removeContainer func(ctx context.Context, id string) error

	mu      sync.Mutex
	entries map[string]E
	perWS   map[string]int
	closing bool
}

func newContainerSessions[E registered](svc *Service, kind sessionKind, cfg SessionConfig,
	list func(context.Context) ([]ShellContainer, error), remove func(context.Context, string) error) containerSessions[E] {
	return containerSessions[E]{svc: svc, kind: kind, config: cfg, log: cmp.Or(cfg.Logger, svc.log),
		listContainers: list, removeContainer: remove, entries: map[string]E{}, perWS: map[string]int{}}
}

// Live counts this process's sessions of the kind, opening ones included.
func (c *containerSessions[E]) Live() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Admit answers the checks that come before the handshake's own.
// Reasons: shell_disabled, server_shutting_down.
func (c *containerSessions[E]) Admit() error {
	if !c.config.Enabled {
		return cairn.Errorf(cairn.ReasonShellDisabled, "%s", c.kind.disabled)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return c.shuttingDown()
	}
	return nil
}

func (c *containerSessions[E]) shuttingDown() error {
	return cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down; %s", c.kind.retry)
}

// Known reports whether id is in this process's registry.
func (c *containerSessions[E]) Known(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[id]
	return ok
}

// enter registers a new session of the workspace, taking its cap slots,
// and returns its entry, made by newEntry around its registration, and
// its life: its context from open to end, detached from the request but
// keeping its values (the actor) for its audit rows. Reasons:
// workspace_not_found, too_many_shells, server_shutting_down.
func (c *containerSessions[E]) enter(ctx context.Context, workspaceID, clientAddr string, openedAt time.Time,
	newEntry func(registration) E) (E, context.Context, error) {
	var none E
	ws, err := c.svc.store.FindWorkspace(ctx, workspaceID)
	if err != nil {
		return none, nil, err
	}
	life, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	id := ulid.Make().String()
	e := newEntry(registration{id: id, workspaceID: ws.ID, tokenName: actorName(ctx), clientAddr: clientAddr,
		// The sidecars' naming scheme: a leftover never collides with a
		// new session.
		container: c.svc.appName + "." + c.kind.name + "." + ws.ID + "." + id,
		openedAt:  openedAt, cancel: cancel, done: make(chan struct{})})
	if err := c.reserve(e); err != nil {
		cancel(err)
		return none, nil, err
	}
	return e, life, nil
}

// reserve enters e in the registry, taking its cap slots atomically with
// the check. Reasons: too_many_shells, server_shutting_down.
func (c *containerSessions[E]) reserve(e E) error {
	r := e.registered()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closing:
		return c.shuttingDown()
	case len(c.entries) >= c.config.MaxSessions:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"this server already runs %d %s, its limit (shell.limits.maxSessions); %s",
			len(c.entries), c.kind.plural, c.kind.freeSlot)
	case c.perWS[r.workspaceID] >= c.config.MaxSessionsPerWorkspace:
		return cairn.Errorf(cairn.ReasonTooManyShells,
			"workspace %s already has %d %s on this server, its limit (shell.limits.maxSessionsPerWorkspace); %s",
			r.workspaceID, c.perWS[r.workspaceID], c.kind.plural, c.kind.freeSlot)
	}
	c.entries[r.id] = e
	c.perWS[r.workspaceID]++
	return nil
}

// remove takes r out of the registry and frees its slots.
func (c *containerSessions[E]) remove(r *registration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[r.id]; !ok {
		return
	}
	delete(c.entries, r.id)
	if c.perWS[r.workspaceID]--; c.perWS[r.workspaceID] <= 0 {
		delete(c.perWS, r.workspaceID)
	}
}

// leave ends a session that never served: it leaves the registry, its end
// counts as recorded, and its life ends with cause.
func (c *containerSessions[E]) leave(r *registration, cause error) {
	c.remove(r)
	close(r.done)
	r.cancel(cause)
}

// createOnReady runs create under the workspace's shared lock, from the
// READY check until the container exists: a volume teardown (exclusive)
// landing in between would let the engine re-create the volume empty.
// Once the container mounts it, the engine itself refuses the removal.
// create gets the workspace as read under the lock, which e keeps; a
// failure takes e out of the registry. Reasons: volume_not_ready,
// volume_missing, workspace_busy, and create's.
func createOnReady[E registered, T any](ctx context.Context, c *containerSessions[E], e E,
	create func(context.Context, *cairn.Workspace) (T, error)) (T, error) {
	r := e.registered()
	made, ws, err := onReadyVolume(ctx, c, r.workspaceID, create)
	if err != nil {
		c.leave(r, err)
		return made, err
	}
	r.ws = ws
	return made, nil
}

func onReadyVolume[E registered, T any](ctx context.Context, c *containerSessions[E], workspaceID string,
	create func(context.Context, *cairn.Workspace) (T, error)) (T, *cairn.Workspace, error) {
	var none T
	lctx, cancel := context.WithTimeout(ctx, c.config.OpenTimeout)
	defer cancel()
	release, err := c.svc.store.LockWorkspace(lctx, workspaceID, LockShared)
	if err != nil {
		return none, nil, err
	}
	defer release()
	ws, err := c.svc.store.FindWorkspace(lctx, workspaceID)
	if err != nil {
		return none, nil, err
	}
	if ws.VolumeState != cairn.VolumeReady {
		return none, nil, cairn.Errorf(cairn.ReasonVolumeNotReady,
			"workspace %s has no volume (volume state '%s'); set it up first", ws.Name, ws.VolumeState)
	}
	exists, err := c.svc.runtime.VolumeExists(lctx, ws.VolumeName)
	if err != nil {
		return none, nil, err
	}
	if !exists {
		return none, nil, cairn.Errorf(cairn.ReasonVolumeMissing,
			"the volume of workspace %s is missing in Docker; set the volume up again", ws.Name)
	}
	made, err := create(lctx, ws)
	if err != nil {
		return none, nil, err
	}
	c.svc.markActive(ctx, ws.ID)
	return made, ws, nil
}

// abort tears down a session whose upgrade failed, its container closed
// by teardown: there is nobody to serve, and no row was written.
func (c *containerSessions[E]) abort(r *registration, teardown func() error) {
	if err := teardown(); err != nil {
		c.log.Error(c.kind.name+" teardown failed", c.kind.idKey, r.id, "err", err)
	}
	c.leave(r, errors.New("upgrade failed"))
}

// attrs identify a session in its log lines; what it shows or runs is
// never logged.
func (c *containerSessions[E]) attrs(r *registration) []any {
	return []any{c.kind.idKey, r.id, "workspace_id", r.workspaceID, "token_name", r.tokenName,
		"client_addr", r.clientAddr}
}

// auditStart writes the row a session starts with (typ: SHELL_OPENED,
// EXEC_STARTED): the workspace, the session and its container, who
// opened it from where, and the kind's own fields. A session that cannot
// be audited does not run.
func (c *containerSessions[E]) auditStart(ctx context.Context, typ cairn.AuditType, r *registration, own map[string]any) error {
	actx, cancel := context.WithTimeout(ctx, auditTimeout)
	defer cancel()
	meta := map[string]any{"workspace_id": r.ws.ID, "workspace_name": r.ws.Name, c.kind.idKey: r.id,
		"container": r.container, "token_name": r.tokenName, "client_addr": r.clientAddr}
	maps.Copy(meta, own)
	if err := c.svc.audit(actx, c.svc.store, typ, meta); err != nil {
		c.log.Error(c.kind.name+" audit failed; "+c.kind.unaudited, c.kind.idKey, r.id, "err", err)
		return err
	}
	return nil
}

// sessionEnd is how a served session ended, whichever protocol served it.
type sessionEnd struct {
	reason            ptyshell.Reason
	exitCode          int
	bytesIn, bytesOut int64
	err               error
}

// errSessionEnded ends a session's life once its end is recorded.
var errSessionEnded = errors.New("session ended")

// recordEnd records the end of a served session: r leaves the registry
// and frees its cap slots, the end row typ is written with the kind's own
// fields (none when typ is empty: the start was never audited), and the
// end is logged with attrs. The caller closes r.done once it has recorded
// the rest.
func (c *containerSessions[E]) recordEnd(life context.Context, r *registration, end sessionEnd, typ cairn.AuditType,
	own map[string]any, attrs []any) {
	c.remove(r)
	r.cancel(errSessionEnded)
	took := time.Since(r.openedAt)
	// The row outlives the session's context, which is cancelled by now.
	actx, cancel := context.WithTimeout(context.WithoutCancel(life), auditTimeout)
	defer cancel()
	if typ != "" {
		meta := map[string]any{"workspace_id": r.ws.ID, "workspace_name": r.ws.Name, c.kind.idKey: r.id,
			"container": r.container, "reason": string(end.reason), "exit_code": end.exitCode,
			"duration_s": took.Seconds(), "bytes_in": end.bytesIn, "bytes_out": end.bytesOut}
		maps.Copy(meta, own)
		if err := c.svc.audit(actx, c.svc.store, typ, meta); err != nil {
			c.log.Error(c.kind.name+" audit failed", c.kind.idKey, r.id, "err", err)
		}
	}
	attrs = append(attrs, "reason", string(end.reason), "exit_code", end.exitCode,
		"duration", took, "bytes_in", end.bytesIn, "bytes_out", end.bytesOut)
	if end.err != nil && end.reason == ptyshell.ReasonError {
		attrs = append(attrs, "err", end.err)
	}
	c.log.Log(actx, slog.LevelInfo, c.kind.name+" ended", attrs...)
}

// Shutdown ends every session of the kind in this process: new ones are
// refused with server_shutting_down, every live one ends in parallel with
// reason "server_shutdown" (stop, drain, the last frame, close 1001), and
// once they are recorded, or ctx is done, the containers of whatever is
// left are force-removed. net/http's Shutdown does neither: it does not
// track hijacked connections.
func (c *containerSessions[E]) Shutdown(ctx context.Context) {
	c.mu.Lock()
	c.closing = true
	live := make([]*registration, 0, len(c.entries))
	for _, e := range c.entries {
		live = append(live, e.registered())
	}
	c.mu.Unlock()
	for _, r := range live {
		r.cancel(ptyshell.ErrServerShutdown)
	}
	for _, r := range live {
		select {
		case <-r.done:
		case <-ctx.Done():
		}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.config.StopTimeout+10*time.Second)
	defer cancel()
	for _, r := range live {
		select {
		case <-r.done:
			continue
		default:
		}
		if err := c.removeContainer(rctx, r.container); err != nil {
			c.log.Error("remove "+c.kind.name+" container at shutdown", c.kind.idKey, r.id, "err", err)
		}
	}
}

// reap is one pass of the kind's reaper: it removes the app's containers
// of the kind that carry this server's instance but are not in its
// registry — a predecessor's leftovers, or a teardown that failed — and
// those of other instances that expired says may go, and counts them. A
// session enters the registry before its container exists, so an opening
// one is never taken.
// keep, when set, spares containers whose sessions live outside this
// process (the registry's v2 shells).
func (c *containerSessions[E]) reap(ctx context.Context, expired func(context.Context, ShellContainer) bool, keep func(id string) bool) (int, error) {
	list, err := c.listContainers(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, sc := range list {
		own := sc.Instance == c.config.Instance
		if keep != nil && keep(sc.ShellID) || own && c.Known(sc.ShellID) || !own && !expired(ctx, sc) {
			continue
		}
		if err := c.removeContainer(ctx, sc.ContainerID); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		c.log.Warn("removed a leftover "+c.kind.name+" container", c.kind.idKey, sc.ShellID,
			"workspace_id", sc.WorkspaceID, "container", sc.Name, "instance", sc.Instance)
	}
	return n, errors.Join(errs...)
}

// reapEvery runs a reaper's pass at once, then every reap interval, until
// ctx is done; failures are logged and the loop goes on. It returns nil.
func (c *containerSessions[E]) reapEvery(ctx context.Context, pass func(context.Context) (int, error)) error {
	t := time.NewTicker(c.config.ReapInterval)
	defer t.Stop()
	for {
		if _, err := pass(ctx); err != nil && ctx.Err() == nil {
			c.log.Error(c.kind.name+" reaper failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// actorName is the token name of ctx's actor, "" without authentication.
func actorName(ctx context.Context) string {
	if a := cairn.ActorFrom(ctx); a != nil {
		return *a
	}
	return ""
}
