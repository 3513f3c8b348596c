package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
)

// LifecycleStore finds the workspaces a lifecycle pass acts on and
// records its warnings and the activity it sees (server/postgres).
type LifecycleStore interface {
	// ExpiryCandidates lists up to limit workspaces expiring by horizon.
	ExpiryCandidates(ctx context.Context, horizon time.Time, limit int) ([]*cairn.Workspace, error)
	// ArchiveCandidates lists up to limit READY, unarchived workspaces
	// whose idle bound (theirs, else defaultIdleSecs) is set.
	ArchiveCandidates(ctx context.Context, defaultIdleSecs int64, limit int) ([]*cairn.Workspace, error)
	// Warn marks the workspaces of ids not yet warned of op (OpExpiring,
	// OpArchiving) as warned at the given time, sends each warning to the
	// events stream and the webhooks and records audit(id), in one
	// transaction; it returns those it warned.
	Warn(ctx context.Context, op string, ids []string, at time.Time, audit func(id string) *cairn.AuditEvent) ([]string, error)
	// MarkActive records activity of the workspaces at the given time,
	// withdrawing an archiving warning.
	MarkActive(ctx context.Context, ids []string, at time.Time) error
}

// LifecycleConfig is the lifecycle.* config.
type LifecycleConfig struct {
	DefaultTTL       time.Duration // 0: workspaces do not expire unless asked
	WarnBefore       time.Duration // how long before acting the warning goes out
	ArchiveIdleAfter time.Duration // 0: idle volumes stay unless a workspace asks
}

// lifecyclePage bounds the workspaces one pass looks at of each kind; the
// rest wait for the next pass.
const lifecyclePage = 500

// LifecycleResult is what one lifecycle pass did.
type LifecycleResult struct {
	Warned, Expired, Archived int
	Errors                    []error // per workspace; the pass goes on
}

// SetWorkspaceLifecycle replaces the workspace's lifecycle settings.
func (s *Service) SetWorkspaceLifecycle(ctx context.Context, id string, l cairn.Lifecycle) (*cairn.Workspace, error) {
	if err := l.Validate(s.now()); err != nil {
		return nil, err
	}
	return s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		applyLifecycle(ws, l, s.now())
		if err := st.UpdateWorkspace(ctx, ws); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditWorkspaceLifecycle, lifecycleMeta(ws, "set"))
	})
}

// TouchWorkspace records activity and postpones a ttl's expiry.
func (s *Service) TouchWorkspace(ctx context.Context, id string) (*cairn.Workspace, error) {
	return s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		now := s.now()
		ws.LastActiveAt = now
		if ws.TTLSecs != nil {
			at := now.Add(time.Duration(*ws.TTLSecs) * time.Second)
			ws.ExpiresAt = &at
		}
		ws.ExpiryWarnedAt, ws.ArchiveWarnedAt = nil, nil
		if err := st.UpdateWorkspace(ctx, ws); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditWorkspaceLifecycle, lifecycleMeta(ws, "touch"))
	})
}

// applyLifecycle sets ws's lifecycle from l as of now and withdraws the
// warnings sent under the old settings.
func applyLifecycle(ws *cairn.Workspace, l cairn.Lifecycle, now time.Time) {
	ws.TTLSecs, ws.ExpiresAt, ws.ArchiveIdleAfterSecs = l.TTLSecs, l.ExpiresAt, l.ArchiveIdleAfterSecs
	if l.TTLSecs != nil {
		at := now.Add(time.Duration(*l.TTLSecs) * time.Second)
		ws.ExpiresAt = &at
	}
	ws.ExpiryWarnedAt, ws.ArchiveWarnedAt = nil, nil
}

func lifecycleMeta(ws *cairn.Workspace, action string) map[string]any {
	meta := map[string]any{"workspace_id": ws.ID, "workspace_name": ws.Name, "action": action}
	if ws.ExpiresAt != nil {
		meta["expires_at"] = ws.ExpiresAt.Format(time.RFC3339Nano)
	}
	if ws.ArchiveIdleAfterSecs != nil {
		meta["archive_idle_after_secs"] = *ws.ArchiveIdleAfterSecs
	}
	return meta
}

// defaultLifecycle gives a new workspace that asks for no expiry the
// configured default ttl.
func (s *Service) defaultLifecycle(l cairn.Lifecycle) cairn.Lifecycle {
	if l.TTLSecs == nil && l.ExpiresAt == nil && s.lifecycle.DefaultTTL > 0 {
		ttl := int64(s.lifecycle.DefaultTTL / time.Second)
		l.TTLSecs = &ttl
	}
	return l
}

// markActive records that cairn saw the workspace in use, best-effort: a
// failure costs at most an early archiving warning, which a touch withdraws.
func (s *Service) markActive(ctx context.Context, workspaceID string) {
	if s.lifecycleStore == nil || !s.activity.due(workspaceID, s.now()) {
		return
	}
	if err := s.lifecycleStore.MarkActive(context.WithoutCancel(ctx), []string{workspaceID}, s.now()); err != nil {
		s.log.Warn("record workspace activity", "workspace_id", workspaceID, "err", err)
	}
}

// activityGrain is how often one process records a workspace's activity:
// last_active_at is kept to the minute.
const activityGrain = time.Minute

// maxActivityMarks bounds the workspaces activityMarks remembers.
const maxActivityMarks = 10_000

// activityMarks remembers when this process last recorded each workspace's
// activity, so that a burst of reads and writes costs one row write a
// minute instead of one query each.
type activityMarks struct {
	mu sync.Mutex
	at map[string]time.Time
}

// due reports whether the workspace's activity is to be recorded now, and
// notes it as recorded.
func (a *activityMarks) due(workspaceID string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if last, ok := a.at[workspaceID]; ok && now.Sub(last) < activityGrain {
		return false
	}
	if a.at == nil || len(a.at) >= maxActivityMarks {
		a.at = map[string]time.Time{} // forgetting costs one early write each
	}
	a.at[workspaceID] = now
	return true
}

// RunLifecycle is one lifecycle pass of the maintainer: it warns of
// expiries and archives within lifecycle.warnBeforeSecs, then deletes the
// expired workspaces and archives the idle volumes whose warning is that
// old. Nothing is deleted or archived without its warning having gone out
// first, and a volume in use is never archived.
func (s *Service) RunLifecycle(ctx context.Context) (*LifecycleResult, error) {
	res := &LifecycleResult{}
	if s.lifecycleStore == nil {
		return res, nil
	}
	ctx = cairn.WithActor(ctx, "maintainer")
	if err := s.expire(ctx, res); err != nil {
		return res, err
	}
	return res, s.archiveIdle(ctx, res)
}

// expire warns of and deletes expiring workspaces.
func (s *Service) expire(ctx context.Context, res *LifecycleResult) error {
	now := s.now()
	list, err := s.lifecycleStore.ExpiryCandidates(ctx, now.Add(s.lifecycle.WarnBefore), lifecyclePage)
	if err != nil {
		return err
	}
	var unwarned []string
	for _, ws := range list {
		switch {
		case ws.ExpiryWarnedAt == nil:
			unwarned = append(unwarned, ws.ID)
		case !ws.ExpiresAt.After(now) && !ws.ExpiryWarnedAt.Add(s.lifecycle.WarnBefore).After(now):
			if err := s.expireOne(ctx, ws.ID); err != nil {
				res.Errors = append(res.Errors, fmt.Errorf("expire workspace %s: %w", ws.ID, err))
				continue
			}
			res.Expired++
		}
	}
	return s.warn(ctx, OpExpiring, cairn.AuditWorkspaceExpiring, unwarned, res)
}

// expireOne removes an expired workspace: its volume (refused while in
// use), then the row with its artifacts and snapshots. A touch that came
// meanwhile spares it: the row is read again under the lock.
func (s *Service) expireOne(ctx context.Context, id string) error {
	return s.withVolumeLock(ctx, id, func(ws *cairn.Workspace) error {
		if ws.ExpiresAt == nil || ws.ExpiresAt.After(s.now()) || ws.ExpiryWarnedAt == nil {
			return nil
		}
		if ws.VolumeState == cairn.VolumeReady {
			if err := s.runtime.StopBrowse(ctx, ws.ID); err != nil {
				return err
			}
			if err := s.runtime.RemoveVolume(ctx, ws.VolumeName); err != nil {
				return err
			}
			if err := s.setVolumeState(ctx, ws.ID, cairn.VolumeNone); err != nil {
				return err
			}
		}
		return s.deleteWorkspaceRow(ctx, ws.ID)
	})
}

// archiveIdle warns of and archives idle volumes. A volume a container
// mounts now is active: its clock restarts and its warning is withdrawn.
func (s *Service) archiveIdle(ctx context.Context, res *LifecycleResult) error {
	now := s.now()
	list, err := s.lifecycleStore.ArchiveCandidates(ctx, int64(s.lifecycle.ArchiveIdleAfter/time.Second), lifecyclePage)
	if err != nil || len(list) == 0 {
		return err
	}
	volumes := make([]string, len(list))
	for i, ws := range list {
		volumes[i] = ws.VolumeName
	}
	counts, err := s.runtime.MountCounts(ctx, volumes)
	if err != nil {
		return err
	}
	var active, unwarned []string
	for _, ws := range list {
		idle := s.idleBound(ws)
		switch {
		case counts[ws.VolumeName] > 0:
			active = append(active, ws.ID)
		case ws.LastActiveAt.Add(idle - s.lifecycle.WarnBefore).After(now):
		case ws.ArchiveWarnedAt == nil:
			unwarned = append(unwarned, ws.ID)
		case !ws.LastActiveAt.Add(idle).After(now) && !ws.ArchiveWarnedAt.Add(s.lifecycle.WarnBefore).After(now):
			if err := s.archiveOne(ctx, ws.ID); err != nil {
				res.Errors = append(res.Errors, fmt.Errorf("archive workspace %s: %w", ws.ID, err))
				continue
			}
			res.Archived++
		}
	}
	if len(active) > 0 {
		if err := s.lifecycleStore.MarkActive(ctx, active, now); err != nil {
			return err
		}
	}
	return s.warn(ctx, OpArchiving, cairn.AuditWorkspaceArchiving, unwarned, res)
}

func (s *Service) idleBound(ws *cairn.Workspace) time.Duration {
	if ws.ArchiveIdleAfterSecs != nil {
		return time.Duration(*ws.ArchiveIdleAfterSecs) * time.Second
	}
	return s.lifecycle.ArchiveIdleAfter
}

// warn sends the warnings not sent yet.
func (s *Service) warn(ctx context.Context, op string, typ cairn.AuditType, ids []string, res *LifecycleResult) error {
	if len(ids) == 0 {
		return nil
	}
	warned, err := s.lifecycleStore.Warn(ctx, op, ids, s.now(), func(id string) *cairn.AuditEvent {
		return s.auditEvent(ctx, typ, map[string]any{"workspace_id": id, "warn_before_secs": int64(s.lifecycle.WarnBefore / time.Second)})
	})
	res.Warned += len(warned)
	return err
}

// archiveOne snapshots an idle, unmounted volume and tears it down, under
// one hold of the workspace's lock: the workspace keeps volume_state NONE
// and archived_snapshot_id, and its next setup restores the snapshot.
func (s *Service) archiveOne(ctx context.Context, id string) error {
	if err := s.snapshotsConfigured(); err != nil {
		return err
	}
	return s.withVolumeLock(ctx, id, func(ws *cairn.Workspace) error {
		if ws.VolumeState != cairn.VolumeReady || ws.ArchiveWarnedAt == nil || ws.ArchivedSnapshotID != nil {
			return nil // set up again, touched or archived meanwhile
		}
		if err := s.requireUnmounted(ctx, ws); err != nil {
			return err
		}
		snap, err := s.snapshot(ctx, ws, cairn.SnapshotCreate{Name: "archive-" + ulid.Make().String()})
		if err != nil {
			return err
		}
		if err := s.runtime.StopBrowse(ctx, ws.ID); err != nil {
			return err
		}
		if err := s.runtime.RemoveVolume(ctx, ws.VolumeName); err != nil {
			return err
		}
		_, err = s.updateWorkspace(ctx, ws.ID, func(st Store, row *cairn.Workspace) error {
			row.VolumeState, row.VolumeIssue, row.ArchivedSnapshotID, row.ArchiveWarnedAt = cairn.VolumeNone, nil, &snap.ID, nil
			if err := st.UpdateWorkspace(ctx, row); err != nil {
				return err
			}
			return s.audit(ctx, st, cairn.AuditWorkspaceArchived, map[string]any{
				"workspace_id": row.ID, "workspace_name": row.Name, "snapshot_id": snap.ID})
		})
		return err
	})
}

// unarchive restores an archived workspace's snapshot into the volume a
// setup just made, and forgets the archive. Runs under the setup's lock.
func (s *Service) unarchive(ctx context.Context, ws *cairn.Workspace) error {
	if ws.ArchivedSnapshotID == nil {
		return nil
	}
	if err := s.snapshotsConfigured(); err != nil {
		return err
	}
	row, err := s.snapshots.FindSnapshot(ctx, *ws.ArchivedSnapshotID)
	if err != nil {
		return err
	}
	if _, err := s.restore(ctx, ws, row); err != nil {
		return err
	}
	_, err = s.updateWorkspace(ctx, ws.ID, func(st Store, row *cairn.Workspace) error {
		row.ArchivedSnapshotID, row.LastActiveAt = nil, s.now()
		return st.UpdateWorkspace(ctx, row)
	})
	return err
}
