// Package reconcile is cairn's maintainer: a leader-elected loop that, every
// interval, brings workspace volume states in line with the engine, reaps
// aged staging objects and unreferenced final objects, flags artifacts whose
// object vanished, and removes leaked sidecar containers. Every pass,
// scheduled or on demand, holds the pass lock.
package reconcile

import (
	"cmp"
	"context"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// The sweep names of logs and error lines.
const (
	sweepVolumes    = "workspace-volume-states"
	sweepStaging    = "staging-objects"
	sweepStorage    = "storage-objects"
	sweepContainers = "containers"
	sweepUploads    = "multipart-uploads"
	sweepLeftovers  = "leftovers"
	sweepSnapshots  = "snapshots"
	sweepLifecycle  = "lifecycle"
)

// defaultPageSize is the listing and row page of every sweep.
const defaultPageSize = 1000

// Config holds the reconciler's settings; zero values take defaults.
type Config struct {
	AppName        string              // volume prefix, container label, lock names; default "cairn"
	Instance       string              // the cairn.instance label of this stack's containers, if any
	Keys           service.KeyPrefixes // object-key prefixes
	Interval       time.Duration       // maintenance.sweepIntSec; default 300 s
	ObjAgeOut      time.Duration       // maintenance.objAgeOutSec; default 3600 s
	SidecarTimeout time.Duration       // artifact.sidecar.timeoutSecs; default 300 s
	PassTimeout    time.Duration       // bound of one scheduled pass; default 30 min
	Logger         *slog.Logger        // default: discard
	Now            func() time.Time    // default: cairn.Now
	// OnPass, when set, sees every finished pass (err is its SQL error, if
	// any); the seam for metrics.
	OnPass func(res *cairn.SweepResult, err error)
	// Shells, when set, has the containers sweep take leaked shell
	// containers too; ShellOpenTimeout is shell.timeouts.openSecs.
	Shells           ShellContainers
	ShellOpenTimeout time.Duration
	// Leftovers, when set, are the discards the service of this process
	// failed (the store was down); every full pass retries them first.
	Leftovers *service.Leftovers
	// Lifecycle, when set, runs workspace expiry and idle archiving at
	// the end of every full pass.
	Lifecycle Lifecycle
}

// Lifecycle is the service's lifecycle pass.
type Lifecycle interface {
	RunLifecycle(ctx context.Context) (*service.LifecycleResult, error)
}

// Reconciler runs reconciliation passes. It implements
// cairn.MaintenanceService.
type Reconciler struct {
	store      Store
	objects    Objects
	containers Containers
	volumes    Volumes
	cfg        Config
	log        *slog.Logger

	staging, final string // cleaned prefixes, with their trailing "/"
	pageSize       int

	leader  atomic.Bool
	mu      sync.Mutex
	lastErr error // the SQL error of the last pass, if it had one
}

var _ cairn.MaintenanceService = (*Reconciler)(nil)

// New returns a Reconciler over the given ports.
func New(store Store, objects Objects, containers Containers, volumes Volumes, cfg Config) *Reconciler {
	cfg.AppName = cmp.Or(cfg.AppName, "cairn")
	cfg.Interval = cmp.Or(cfg.Interval, 300*time.Second)
	cfg.ObjAgeOut = cmp.Or(cfg.ObjAgeOut, 3600*time.Second)
	cfg.SidecarTimeout = cmp.Or(cfg.SidecarTimeout, 300*time.Second)
	cfg.PassTimeout = cmp.Or(cfg.PassTimeout, 30*time.Minute)
	if cfg.Now == nil {
		cfg.Now = cairn.Now
	}
	join := func(part, def string) string {
		return strings.Trim(path.Clean(path.Join("/", cfg.Keys.Base, cmp.Or(part, def))), "/") + "/"
	}
	return &Reconciler{
		store:      store,
		objects:    objects,
		containers: containers,
		volumes:    volumes,
		cfg:        cfg,
		log:        cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		staging:    join(cfg.Keys.Staging, "staging"),
		final:      join(cfg.Keys.Store, "store"),
		pageSize:   defaultPageSize,
	}
}

// Sweep runs one pass now; it is RunOnce under the MaintenanceService name.
func (r *Reconciler) Sweep(ctx context.Context, workspaceID string) (*cairn.SweepResult, error) {
	return r.RunOnce(ctx, workspaceID)
}

// Leader reports whether this reconciler holds the leader lock.
func (r *Reconciler) Leader() bool { return r.leader.Load() }

// Ready reports not_ready while the last pass stopped on an SQL error.
func (r *Reconciler) Ready() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastErr != nil {
		return &cairn.Error{Reason: cairn.ReasonNotReady,
			Detail: "the last reconciliation pass failed on a database error", Err: r.lastErr}
	}
	return nil
}

// RunOnce runs one pass under the pass lock, waiting for it until ctx is
// done (then sweep_busy). workspaceID "" is a full pass; otherwise the pass
// is scoped to that workspace (workspace_not_found if there is none). The
// four sweeps run in order, each even if an earlier one failed; their
// per-item failures are in the result's Errors. An SQL error stops the pass:
// it is returned (reason internal) with the partial result.
func (r *Reconciler) RunOnce(ctx context.Context, workspaceID string) (*cairn.SweepResult, error) {
	var ws *cairn.Workspace
	if workspaceID != "" {
		var err error
		if ws, err = r.store.FindWorkspace(ctx, workspaceID); err != nil {
			return nil, err
		}
	}
	release, err := r.store.LockPass(ctx, r.cfg.AppName)
	if err != nil {
		if cairn.ErrorReason(err) == cairn.ReasonInternal {
			r.setLastErr(err)
		}
		return nil, err
	}
	defer release()

	now := r.cfg.Now()
	p := &pass{r: r, ws: ws, cutoff: now.Add(-r.cfg.ObjAgeOut), now: now,
		res: &cairn.SweepResult{WorkspaceID: workspaceID, StartedAt: cairn.Timestamp(now)}}
	err = p.run(ctx)
	p.res.FinishedAt = cairn.Timestamp(r.cfg.Now())

	r.setLastErr(err)
	r.report(p.res, err)
	return p.res, err
}

func (r *Reconciler) setLastErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lastErr = err
}

// report writes the pass's INFO line (or its ERROR line) and calls OnPass.
func (r *Reconciler) report(res *cairn.SweepResult, err error) {
	attrs := []any{
		"workspace_id", res.WorkspaceID,
		"volumes_examined", res.VolumesExamined, "volumes_adopted", res.VolumesAdopted,
		"volumes_cleared", res.VolumesCleared, "volumes_orphaned", res.VolumesOrphaned,
		"staging_examined", res.StagingExamined, "staging_deleted", res.StagingDeleted,
		"uploads_aborted", res.UploadsAborted,
		"storage_examined", res.StorageExamined, "storage_deleted", res.StorageDeleted,
		"artifacts_flagged", res.ArtifactsFlagged, "released_pruned", res.ReleasedPruned,
		"containers_removed", res.ContainersRemoved, "errors", len(res.Errors) + res.ErrorsOmitted,
		"duration", res.FinishedAt.Sub(res.StartedAt),
	}
	if err != nil {
		r.log.Error("reconciliation pass stopped on a database error", append(attrs, "err", err)...)
	} else {
		r.log.Info("reconciliation pass", attrs...)
	}
	if r.cfg.OnPass != nil {
		r.cfg.OnPass(res, err)
	}
}

// Run is the leader loop: it tries the leader lock every interval and,
// while it holds it, runs a pass an interval after becoming leader and an
// interval after each pass returned. A lost session ends the leadership;
// the loop tries again. Run returns nil when ctx is done.
func (r *Reconciler) Run(ctx context.Context) error {
	for {
		lease, ok, err := r.store.TryLeader(ctx, r.cfg.AppName)
		switch {
		case err != nil && ctx.Err() == nil:
			r.log.Warn("try the maintainer leader lock", "err", err)
		case ok:
			r.lead(ctx, lease)
			lease.Release()
		}
		if !sleep(ctx, r.cfg.Interval) {
			return nil
		}
	}
}

// lead runs passes while the lease lives and ctx is not done.
func (r *Reconciler) lead(ctx context.Context, lease Lease) {
	r.leader.Store(true)
	defer r.leader.Store(false)
	r.log.Info("became the maintainer leader", "app", r.cfg.AppName)

	next := time.NewTimer(r.cfg.Interval)
	defer next.Stop()
	check := time.NewTicker(min(r.cfg.Interval, 10*time.Second))
	defer check.Stop()
	alive := func() bool {
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := lease.Alive(actx); err != nil {
			if ctx.Err() == nil {
				r.log.Warn("lost the maintainer leader session", "err", err)
			}
			return false
		}
		return true
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-check.C:
			if !alive() {
				return
			}
		case <-next.C:
			if !alive() {
				return
			}
			pctx, cancel := context.WithTimeout(ctx, r.cfg.PassTimeout)
			_, err := r.RunOnce(pctx, "")
			cancel()
			if err != nil && cairn.ErrorReason(err) == cairn.ReasonSweepBusy && ctx.Err() == nil {
				r.log.Warn("scheduled pass gave up waiting for the pass lock", "err", err)
			}
			next.Reset(r.cfg.Interval)
		}
	}
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// pass is the state of one pass.
type pass struct {
	r      *Reconciler
	ws     *cairn.Workspace // scoped pass; nil for a full one
	now    time.Time
	cutoff time.Time
	res    *cairn.SweepResult
}

// run runs the four sweeps in order; only an SQL error stops it.
func (p *pass) run(ctx context.Context) error {
	if err := p.sweepVolumes(ctx); err != nil {
		return err
	}
	if p.ws == nil {
		if err := p.sweepLeftovers(ctx); err != nil {
			return err
		}
	}
	p.sweepStaging(ctx)
	p.sweepUploads(ctx)
	if err := p.sweepStorage(ctx); err != nil {
		return err
	}
	if p.ws == nil {
		p.sweepContainers(ctx)
		p.sweepShells(ctx)
		if err := p.sweepSnapshots(ctx); err != nil {
			return err
		}
		if err := p.sweepLifecycle(ctx); err != nil {
			return err
		}
	}
	return nil
}

// fail records a per-item failure: a sanitised line for the result, the
// cause in the log.
func (p *pass) fail(sweep, what string, err error) {
	line := sweep + ": " + what
	if err != nil {
		line += ": " + cairn.ErrorDetail(err)
	}
	p.res.AddError(line)
	p.r.log.Warn("reconciliation failure", "sweep", sweep, "what", what, "err", err)
}

// workspaceID is the scope, or "" for a full pass.
func (p *pass) workspaceID() string {
	if p.ws == nil {
		return ""
	}
	return p.ws.ID
}

// scopedPrefix narrows a key prefix to the pass's workspace.
func (p *pass) scopedPrefix(prefix string) string {
	if p.ws == nil {
		return prefix
	}
	return prefix + p.ws.ID + "/"
}
