package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// sweepVolumes is sweep (a): volume-state sync. Only the volume listing's
// failure aborts it; per-workspace failures are collected.
func (p *pass) sweepVolumes(ctx context.Context) error {
	names, err := p.r.volumes.ListVolumes(ctx, p.r.cfg.AppName+"-")
	if err != nil {
		p.fail(sweepVolumes, "volume listing failed, nothing written", err)
		return nil
	}
	left := make(map[string]struct{}, len(names))
	for _, n := range names {
		left[n] = struct{}{}
	}
	examine := func(ws *cairn.Workspace) {
		p.res.VolumesExamined++
		_, exists := left[ws.VolumeName]
		delete(left, ws.VolumeName)
		// A READY volume that exists is in line, but whether it can take
		// containers now (its node, on Kubernetes) is asked every pass.
		if !exists && ws.VolumeState == cairn.VolumeNone {
			return
		}
		corr, err := p.r.volumes.ReconcileVolume(ctx, ws.ID)
		if err != nil {
			p.fail(sweepVolumes, "workspace "+ws.ID, err)
			return
		}
		p.logCorrection(corr, ws)
	}
	if p.ws != nil {
		examine(p.ws)
		return nil
	}
	var after *cairn.Workspace
	for {
		page, err := p.r.store.WorkspacePage(ctx, after, p.r.pageSize)
		if err != nil {
			return err
		}
		for _, ws := range page {
			examine(ws)
		}
		if len(page) < p.r.pageSize {
			break
		}
		after = page[len(page)-1]
	}
	for name := range left {
		p.res.VolumesOrphaned++
		p.r.log.Warn("orphan volume: no workspace row names it (never deleted)", "sweep", sweepVolumes, "volume", name)
	}
	return nil
}

// logCorrection counts and logs what ReconcileVolume did to ws (the
// service logs a volume_issue set or cleared, with its detail).
func (p *pass) logCorrection(corr service.VolumeCorrection, ws *cairn.Workspace) {
	log := p.r.log.With("sweep", sweepVolumes, "workspace_id", ws.ID, "volume", ws.VolumeName)
	switch corr {
	case service.VolumeAdopted:
		p.res.VolumesAdopted++
		log.Info("adopted a workspace volume")
	case service.VolumeCleared:
		p.res.VolumesCleared++
		log.Info("cleared a vanished workspace volume")
	}
}

// sweepStaging is sweep (b): staging objects older than the cutoff go, one
// bulk delete per listing page. No database access.
func (p *pass) sweepStaging(ctx context.Context) {
	prefix := p.scopedPrefix(p.r.staging)
	after := ""
	for {
		page, err := p.r.objects.List(ctx, prefix, after, p.r.pageSize)
		if err != nil {
			p.fail(sweepStaging, "listing failed", err)
			return
		}
		if len(page) == 0 {
			return
		}
		var doomed []string
		for _, obj := range page {
			if isMarker(obj.Key) {
				continue
			}
			p.res.StagingExamined++
			if obj.LastModified.Before(p.cutoff) {
				doomed = append(doomed, obj.Key)
			}
		}
		p.res.StagingDeleted += len(p.deleteObjects(ctx, sweepStaging, doomed))
		after = page[len(page)-1].Key
	}
}

// sweepUploads aborts the multipart uploads under the store prefix that
// were abandoned: started before the cutoff, and no part received since.
// Their parts hold space. An upload still receiving parts is left alone
// however long it runs — a terabyte takes hours.
func (p *pass) sweepUploads(ctx context.Context) {
	prefix := p.scopedPrefix(p.r.final)
	after := service.Upload{}
	for {
		page, err := p.r.objects.ListUploads(ctx, prefix, after, p.r.pageSize)
		if err != nil {
			p.fail(sweepUploads, "listing failed", err)
			return
		}
		for _, u := range page {
			if !u.Initiated.Before(p.cutoff) || p.uploadActive(ctx, u) {
				continue
			}
			if err := p.r.objects.AbortUpload(ctx, u.Key, u.ID); err != nil {
				p.fail(sweepUploads, "abort failed", err)
				continue
			}
			p.res.UploadsAborted++
		}
		if len(page) < p.r.pageSize {
			return
		}
		after = page[len(page)-1]
	}
}

// uploadActive reports an upload that received a part after the cutoff.
// One that cannot be listed is left for the next pass; one that is gone
// needs no abort.
func (p *pass) uploadActive(ctx context.Context, u service.Upload) bool {
	parts, err := p.r.objects.ListParts(ctx, u.Key, u.ID)
	if errors.Is(err, service.ErrUploadNotFound) {
		return true
	}
	if err != nil {
		p.fail(sweepUploads, "listing an upload's parts failed", err)
		return true
	}
	return slices.ContainsFunc(parts, func(part service.Part) bool { return !part.LastModified.Before(p.cutoff) })
}

// deleteObjects bulk-deletes keys and returns those that went; failures
// are collected.
func (p *pass) deleteObjects(ctx context.Context, sweep string, keys []string) []string {
	if len(keys) == 0 {
		return nil
	}
	failed, err := p.r.objects.DeleteMany(ctx, keys)
	if err != nil {
		p.fail(sweep, "bulk delete failed", err)
	}
	if len(failed) > 0 && err == nil {
		p.fail(sweep, fmt.Sprintf("the store refused to delete %d objects", len(failed)), nil)
	}
	if len(failed) == 0 {
		return keys
	}
	refused := make(map[string]bool, len(failed))
	for _, k := range failed {
		refused[k] = true
	}
	var gone []string
	for _, k := range keys {
		if !refused[k] {
			gone = append(gone, k)
		}
	}
	return gone
}

// sweepStorage is sweep (c): unreferenced final objects past their grace
// go; after a completed listing, RECORDED rows whose object was not listed
// are flagged MISSING_OBJECT and aged released rows are pruned. The listed
// keys are kept in the database, not in memory.
func (p *pass) sweepStorage(ctx context.Context) error {
	keys, err := p.r.store.OpenKeySet(ctx)
	if err != nil {
		return err
	}
	defer keys.Close()
	prefix := p.scopedPrefix(p.r.final)
	// Content written before the listing started is in it if its object
	// is: a row missing from it is flagged on this pass, with no grace
	// window; content written meanwhile never is.
	listingStart := p.r.cfg.Now()
	after := ""
	for {
		page, err := p.r.objects.List(ctx, prefix, after, p.r.pageSize)
		if err != nil {
			p.fail(sweepStorage, "listing failed midway, nothing flagged", err)
			return nil
		}
		if len(page) == 0 {
			break
		}
		listed := make([]string, 0, len(page))
		for _, obj := range page {
			if !isMarker(obj.Key) {
				listed = append(listed, obj.Key)
			}
		}
		p.res.StorageExamined += len(listed)
		if err := keys.Add(ctx, listed); err != nil {
			return err
		}
		referenced, released, err := p.r.store.ObjectRefs(ctx, listed)
		if err != nil {
			return err
		}
		var doomed []string
		for _, obj := range page {
			if referenced[obj.Key] || isMarker(obj.Key) {
				continue
			}
			if at, ok := released[obj.Key]; ok && at.Before(p.cutoff) || !ok && obj.LastModified.Before(p.cutoff) {
				doomed = append(doomed, obj.Key)
			}
		}
		if gone := p.deleteObjects(ctx, sweepStorage, doomed); len(gone) > 0 {
			p.res.StorageDeleted += len(gone)
			if err := p.r.store.DeleteReleased(ctx, gone); err != nil {
				return err
			}
		}
		after = page[len(page)-1].Key
	}

	afterID := ""
	for {
		missing, err := keys.Missing(ctx, prefix, p.workspaceID(), listingStart, afterID, p.r.pageSize)
		if err != nil {
			return err
		}
		for _, a := range missing {
			if err := p.flagIfGone(ctx, a); err != nil {
				return err
			}
		}
		if len(missing) < p.r.pageSize {
			break
		}
		afterID = missing[len(missing)-1].ID
	}
	pruned, err := p.r.store.PruneReleased(ctx, p.cutoff, p.workspaceID())
	if err != nil {
		return err
	}
	p.res.ReleasedPruned = pruned
	return nil
}

// flagIfGone flags a row the completed listing lacked, once a HEAD of its
// key right before answers 404: a listing that raced a write never flags.
// Only an SQL error is returned; a failed HEAD is the pass's error line.
func (p *pass) flagIfGone(ctx context.Context, a *cairn.Artifact) error {
	_, err := p.r.objects.Stat(ctx, a.ObjectKey)
	switch {
	case err == nil:
		return nil // there after all
	case !errors.Is(err, service.ErrObjectNotFound):
		p.fail(sweepStorage, "could not check "+a.ID+", not flagged", err)
		return nil
	}
	ok, err := p.r.store.FlagMissing(ctx, a, p.now)
	if err != nil {
		return err
	}
	if ok {
		p.res.ArtifactsFlagged++
		p.r.log.Warn("artifact object missing from the store; flagged MISSING_OBJECT", "sweep", sweepStorage,
			"workspace_id", a.WorkspaceID, "artifact_id", a.ID)
	}
	return nil
}

// sweepContainers is sweep (d): sidecars older than their timeout plus a
// minute are force-removed — only this stack's own: labelled with its
// instance, or working for one of its database's workspaces. Another stack
// on the same engine may share the app name. (Shell containers: not yet.)
func (p *pass) sweepContainers(ctx context.Context) {
	list, err := p.r.containers.ListSidecars(ctx, p.r.cfg.AppName)
	if err != nil {
		p.fail(sweepContainers, "container listing failed", err)
		return
	}
	limit := p.r.cfg.SidecarTimeout + sidecarGrace
	for _, c := range list {
		if p.now.Sub(c.Created) <= limit || !p.owns(ctx, c) {
			continue
		}
		if err := p.r.containers.RemoveContainer(ctx, c.ID); err != nil {
			p.fail(sweepContainers, "remove container "+shortID(c.ID), err)
			continue
		}
		p.res.ContainersRemoved++
		p.r.log.Warn("removed a leaked sidecar container", "sweep", sweepContainers, "container", c.ID)
	}
}

// owns reports whether c is this stack's container. A lookup that fails
// for another reason than absence counts as not ours: the sweep removes
// only what it knows to be its own.
func (p *pass) owns(ctx context.Context, c Container) bool {
	if p.r.cfg.Instance != "" && c.Instance == p.r.cfg.Instance {
		return true
	}
	if c.WorkspaceID == "" {
		return false
	}
	_, err := p.r.store.FindWorkspace(ctx, c.WorkspaceID)
	return err == nil
}

// sidecarGrace is added to the sidecar timeout before a sidecar counts as
// leaked.
const sidecarGrace = 60 * time.Second

func shortID(id string) string { return id[:min(12, len(id))] }

// isMarker reports a directory marker (see service.ObjectStore.Pin): cairn
// never issues a key ending in "/", and the marker must outlive the sweeps.
func isMarker(key string) bool { return strings.HasSuffix(key, "/") }

// sweepLeftovers retries what the service of this process failed to
// discard while the store was down — a failed pack's multipart upload, an
// object no row came to name — so that they go as soon as the store is
// back rather than at the age-out. A key a row (or a release) names after
// all is left to the other sweeps; what fails again is kept for the next
// pass. Only the database lookup's error stops the pass.
func (p *pass) sweepLeftovers(ctx context.Context) error {
	left := p.r.cfg.Leftovers
	if left == nil {
		return nil
	}
	items := left.Take()
	if len(items) == 0 {
		return nil
	}
	keys := make([]string, 0, len(items))
	for _, it := range items {
		keys = append(keys, it.Key)
	}
	referenced, released, err := p.r.store.ObjectRefs(ctx, keys)
	if err != nil {
		for _, it := range items {
			left.Add(it)
		}
		return err
	}
	var objects []service.Leftover
	for _, it := range items {
		_, held := released[it.Key]
		switch {
		case referenced[it.Key] || held:
		case it.UploadID != "":
			p.abortLeftover(ctx, it)
		default:
			objects = append(objects, it)
		}
	}
	p.deleteLeftovers(ctx, objects)
	return nil
}

// abortLeftover aborts a leftover upload, keeping it when that fails.
func (p *pass) abortLeftover(ctx context.Context, it service.Leftover) {
	if err := p.r.objects.AbortUpload(ctx, it.Key, it.UploadID); err != nil {
		p.fail(sweepLeftovers, "abort failed", err)
		p.r.cfg.Leftovers.Add(it)
		return
	}
	p.res.UploadsAborted++
}

// deleteLeftovers deletes leftover objects in one call, keeping those
// that did not go.
func (p *pass) deleteLeftovers(ctx context.Context, objects []service.Leftover) {
	if len(objects) == 0 {
		return
	}
	keys := make([]string, 0, len(objects))
	for _, it := range objects {
		keys = append(keys, it.Key)
	}
	failed, err := p.r.objects.DeleteMany(ctx, keys)
	if err != nil {
		p.fail(sweepLeftovers, "bulk delete failed", err)
		failed = keys
	}
	kept := make(map[string]bool, len(failed))
	for _, k := range failed {
		kept[k] = true
		p.r.cfg.Leftovers.Add(service.Leftover{Key: k})
	}
	for _, k := range keys {
		if !kept[k] {
			p.res.StorageDeleted++
		}
	}
}
