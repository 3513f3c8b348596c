package service

import (
	"context"
	"strconv"
	"sync"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// RestoreSnapshot replaces the contents of a workspace's unmounted volume
// with a snapshot's tree, under the workspace's exclusive lock.
func (s *Service) RestoreSnapshot(ctx context.Context, workspaceID, snapshotID string) (*cairn.RestoreResult, error) {
	if err := s.snapshotsConfigured(); err != nil {
		return nil, err
	}
	row, err := s.snapshots.FindSnapshot(ctx, snapshotID)
	if err != nil {
		return nil, err
	}
	var out *cairn.RestoreResult
	err = s.withVolumeLock(ctx, workspaceID, func(ws *cairn.Workspace) error {
		if err := s.requireUnmounted(ctx, ws); err != nil {
			return err
		}
		out, err = s.restore(ctx, ws, row)
		return err
	})
	return out, err
}

// restore runs the restore sidecar, which builds the tree beside the old
// one, checks every file's digest, and swaps only once all is there.
func (s *Service) restore(ctx context.Context, ws *cairn.Workspace, row *SnapshotRow) (*cairn.RestoreResult, error) {
	ttl := s.sidecarTimeout + sidecarURLSlack
	url, err := s.objects.PresignGet(ctx, row.ManifestKey, ttl, "")
	if err != nil {
		return nil, err
	}
	run := &restoreRun{s: s, urls: []string{url}}
	res, sc, err := s.runTransfer(ctx, ws, withProgress(ctx, SidecarSpec{
		Command: sidecar.CommandRestore, Role: "cairn-restore", Subject: row.ID,
		Env: map[string]string{sidecar.EnvURL: url, sidecar.EnvArchiveSHA256: row.ManifestSHA256,
			sidecar.EnvMaxEntries: strconv.Itoa(sidecar.DefaultMaxSnapshotEntries), sidecar.EnvMaxBytes: strconv.FormatInt(restoreMaxBytes, 10)},
		Dialog: run.grant,
	}), run.secrets)
	if err == nil {
		err = snapshotVerdict(sidecar.CommandRestore, res, sc, run.secrets()...)
	}
	if err != nil {
		return nil, err
	}
	if res.Size == nil {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the restore sidecar reported success without the bytes it wrote")
	}
	s.onTransfer("store_to_volume", *res.Size)
	err = s.store.WithTx(ctx, func(st Store) error {
		return s.audit(ctx, st, cairn.AuditSnapshotRestored, map[string]any{
			"workspace_id": ws.ID, "snapshot_id": row.ID, "snapshot_workspace_id": row.WorkspaceID,
			"entries": res.Entries, "bytes": *res.Size,
		})
	})
	if err != nil {
		// The volume holds the snapshot now whatever the audit trail says.
		s.log.Error("record a restore in the audit trail", "workspace_id", ws.ID, "snapshot_id", row.ID, "err", err)
	}
	return &cairn.RestoreResult{SnapshotID: row.ID, Entries: res.Entries, Bytes: *res.Size}, nil
}

// restoreRun answers a restore sidecar's locates with presigned GETs.
type restoreRun struct {
	s *Service

	mu   sync.Mutex
	urls []string
}

func (r *restoreRun) secrets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.urls...)
}

// grant answers one locate: each digest's object (one URL per object of
// the batch) and byte range. Content that is gone makes the snapshot
// corrupt.
func (r *restoreRun) grant(ctx context.Context, need sidecar.Need) (sidecar.Grant, error) {
	if need.Need != sidecar.NeedLocate || len(need.Digests) == 0 || len(need.Digests) > sidecar.LocateBatch {
		return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSidecarFailed, "the restore sidecar asked for %q (%d digests) out of turn",
			need.Need, len(need.Digests))
	}
	for _, d := range need.Digests {
		if !isHexDigest(d) {
			return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSidecarFailed, "the restore sidecar asked about a malformed digest")
		}
	}
	found, err := r.s.snapshots.LocateContent(ctx, need.Digests)
	if err != nil {
		return sidecar.Grant{}, err
	}
	var g sidecar.Grant
	index := map[string]int{}
	for _, d := range need.Digests {
		l, ok := found[d]
		if !ok {
			return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSnapshotCorrupt, "content %s of the snapshot is no longer in the store", d)
		}
		i, ok := index[l.ObjectKey]
		if !ok {
			url, err := r.s.objects.PresignGet(ctx, l.ObjectKey, r.s.sidecarTimeout+sidecarURLSlack, "")
			if err != nil {
				return sidecar.Grant{}, err
			}
			i = len(g.URLs)
			index[l.ObjectKey] = i
			g.URLs = append(g.URLs, url)
			r.mu.Lock()
			r.urls = append(r.urls, url)
			r.mu.Unlock()
		}
		g.Locations = append(g.Locations, sidecar.Location{Object: i, Offset: l.Offset, Size: l.Size, Bundle: l.Bundled})
	}
	return g, nil
}

// ListSnapshots lists a workspace's snapshots in creation order.
func (s *Service) ListSnapshots(ctx context.Context, workspaceID string) ([]*cairn.Snapshot, error) {
	if err := s.snapshotsConfigured(); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	return s.snapshots.FindSnapshots(ctx, workspaceID)
}

// GetSnapshot reads one snapshot.
func (s *Service) GetSnapshot(ctx context.Context, id string) (*cairn.Snapshot, error) {
	if err := s.snapshotsConfigured(); err != nil {
		return nil, err
	}
	row, err := s.snapshots.FindSnapshot(ctx, id)
	if err != nil {
		return nil, err
	}
	return &row.Snapshot, nil
}

// DeleteSnapshot deletes one snapshot; the reaper takes its content once
// no snapshot refers to it.
func (s *Service) DeleteSnapshot(ctx context.Context, id string) error {
	if err := s.snapshotsConfigured(); err != nil {
		return err
	}
	row, err := s.snapshots.FindSnapshot(ctx, id)
	if err != nil {
		return err
	}
	return s.snapshots.DeleteSnapshot(ctx, id, s.auditEvent(ctx, cairn.AuditSnapshotDeleted, map[string]any{
		"workspace_id": row.WorkspaceID, "snapshot_id": row.ID, "snapshot_name": row.Name,
	}))
}

// ForkWorkspace snapshots a workspace and makes a new one from it. The
// fork's snapshot stays, named fork-<new name> (snap-<ULID> when that name
// is taken or too long): its content is shared with the source's, so it
// costs only its manifest. A fork that fails after its snapshot deletes it.
func (s *Service) ForkWorkspace(ctx context.Context, workspaceID string, f cairn.WorkspaceFork) (*cairn.Workspace, error) {
	create := cairn.WorkspaceCreate{Name: f.Name, Description: f.Description}
	if err := create.Validate(); err != nil {
		return nil, err
	}
	if err := s.snapshotsConfigured(); err != nil {
		return nil, err
	}
	src, err := s.store.FindWorkspace(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	if taken, err := s.store.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{f.Name}}); err != nil {
		return nil, err
	} else if len(taken) > 0 {
		return nil, cairn.Errorf(cairn.ReasonNameTaken, "a workspace named '%s' already exists", f.Name)
	}
	name, err := s.forkSnapshotName(ctx, workspaceID, f.Name)
	if err != nil {
		return nil, err
	}
	snap, err := s.CreateSnapshot(ctx, workspaceID, cairn.SnapshotCreate{Name: name, Live: f.Live})
	if err != nil {
		return nil, err
	}
	create.VolumeMetadata, create.FromSnapshot = src.VolumeMetadata, snap.ID
	ws, err := s.CreateWorkspace(ctx, create)
	if err != nil {
		if derr := s.DeleteSnapshot(context.WithoutCancel(ctx), snap.ID); derr != nil {
			s.log.Warn("delete the snapshot of a failed fork", "snapshot_id", snap.ID, "err", derr)
		}
		return nil, err
	}
	return ws, nil
}

// forkSnapshotName is fork-<name> while the source has no snapshot of that
// name, else "" (a generated one).
func (s *Service) forkSnapshotName(ctx context.Context, workspaceID, name string) (string, error) {
	name = "fork-" + name
	if len(name) > cairn.MaxNameLength {
		return "", nil
	}
	list, err := s.snapshots.FindSnapshots(ctx, workspaceID)
	if err != nil {
		return "", err
	}
	for _, snap := range list {
		if snap.Name == name {
			return "", nil
		}
	}
	return name, nil
}

// fillFromSnapshot gives a workspace just recorded a READY volume holding
// the snapshot's tree; on failure the workspace and its volume go again,
// so a create from a snapshot makes all or nothing.
func (s *Service) fillFromSnapshot(ctx context.Context, ws *cairn.Workspace, snapshotID string) (err error) {
	defer func() {
		if err != nil {
			s.undoCreate(ctx, ws)
		}
	}()
	if err := s.snapshotsConfigured(); err != nil {
		return err
	}
	row, err := s.snapshots.FindSnapshot(ctx, snapshotID)
	if err != nil {
		return err
	}
	if err := s.SetupVolume(ctx, ws.ID); err != nil {
		return err
	}
	return s.withVolumeLock(ctx, ws.ID, func(ws *cairn.Workspace) error {
		_, err := s.restore(ctx, ws, row)
		return err
	})
}

// undoCreate removes a workspace a create from a snapshot could not fill.
func (s *Service) undoCreate(ctx context.Context, ws *cairn.Workspace) {
	ctx = context.WithoutCancel(ctx)
	if err := s.TeardownVolume(ctx, ws.ID); err != nil {
		s.log.Error("remove the volume of a workspace whose restore failed; the sweep adopts it", "workspace_id", ws.ID, "err", err)
		return
	}
	if err := s.DeleteWorkspace(ctx, ws.ID); err != nil {
		s.log.Error("remove a workspace whose restore failed", "workspace_id", ws.ID, "err", err)
	}
}
