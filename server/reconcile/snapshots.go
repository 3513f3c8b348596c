package reconcile

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/server/service"
)

// snapshotURLSlack is how long past the sidecar timeout a snapshot run's
// upload URLs stay valid (the service's sidecarURLSlack), plus a margin for
// the run's commit.
const snapshotURLSlack = 2 * time.Minute

// sweepSnapshots lets go of content no snapshot refers to once no run has
// used it for the grace (maintenance.objAgeOutSec), then deletes the
// objects that hold nothing any more, and those of runs that died: a
// PENDING object whose upload URL expired long ago. A claimed object's row
// is gone before the object, so no late commit can name it; an object the
// store refused to delete is retried by this process's next pass.
func (p *pass) sweepSnapshots(ctx context.Context) error {
	reaped, err := p.r.store.ReapSnapshotContent(ctx, p.cutoff)
	if err != nil {
		return err
	}
	p.res.SnapshotContentReaped = reaped
	pendingCutoff := p.now.Add(-2*p.r.cfg.SidecarTimeout - snapshotURLSlack)
	for {
		keys, err := p.r.store.ClaimDoomedSnapshotObjects(ctx, p.cutoff, pendingCutoff, p.r.pageSize)
		if err != nil {
			return err
		}
		gone := p.deleteObjects(ctx, sweepSnapshots, keys)
		p.res.SnapshotObjectsDeleted += len(gone)
		p.keepForRetry(keys, gone)
		if len(keys) < p.r.pageSize {
			return nil
		}
	}
}

// keepForRetry hands the claimed keys the store did not delete to the
// leftovers, which the next full pass of this process deletes first.
func (p *pass) keepForRetry(claimed, gone []string) {
	if p.r.cfg.Leftovers == nil || len(gone) == len(claimed) {
		return
	}
	deleted := make(map[string]bool, len(gone))
	for _, k := range gone {
		deleted[k] = true
	}
	for _, k := range claimed {
		if !deleted[k] {
			p.r.cfg.Leftovers.Add(service.Leftover{Key: k})
		}
	}
}

// sweepLifecycle runs the service's lifecycle pass: warnings, expiries and
// archives. A workspace it could not act on is an error line; the pass
// goes on.
func (p *pass) sweepLifecycle(ctx context.Context) error {
	if p.r.cfg.Lifecycle == nil {
		return nil
	}
	res, err := p.r.cfg.Lifecycle.RunLifecycle(ctx)
	if res != nil {
		p.res.WorkspacesWarned, p.res.WorkspacesExpired, p.res.WorkspacesArchived = res.Warned, res.Expired, res.Archived
		for _, e := range res.Errors {
			p.fail(sweepLifecycle, "a workspace was left as it was", e)
		}
	}
	if err != nil {
		p.fail(sweepLifecycle, "the pass stopped", err)
	}
	return nil
}
