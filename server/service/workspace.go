package service

import (
	"context"

	units "github.com/docker/go-units"
	"github.com/google/uuid"

	"github.com/cairn-dev/cairn"
)

// CreateWorkspace records a new workspace; it has no volume yet.
func (s *Service) CreateWorkspace(ctx context.Context, c cairn.WorkspaceCreate) (*cairn.Workspace, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkVolumeSize(c.VolumeMetadata); err != nil {
		return nil, err
	}
	if c.FromSnapshot != "" {
		if _, err := s.GetSnapshot(ctx, c.FromSnapshot); err != nil {
			return nil, err
		}
	}
	now := s.now()
	id := uuid.NewString()
	ws := &cairn.Workspace{
		ID:             id,
		Name:           c.Name,
		Description:    c.Description,
		VolumeName:     s.appName + "-" + id,
		VolumeState:    cairn.VolumeNone,
		VolumeMetadata: c.VolumeMetadata,
		CreatedAt:      now,
		UpdatedAt:      now,
		LastActiveAt:   now,
	}
	applyLifecycle(ws, s.defaultLifecycle(c.Lifecycle), now)
	err := s.store.WithTx(ctx, func(st Store) error {
		if err := st.InsertWorkspace(ctx, ws); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditNewWorkspace, map[string]any{
			"workspace_id": ws.ID, "workspace_name": ws.Name, "volume_name": ws.VolumeName,
		})
	})
	if err != nil {
		return nil, err
	}
	if c.FromSnapshot != "" {
		if err := s.fillFromSnapshot(ctx, ws, c.FromSnapshot); err != nil {
			return nil, err
		}
		return s.store.FindWorkspace(ctx, ws.ID)
	}
	return ws, nil
}

// FindWorkspaces lists workspaces in creation order.
func (s *Service) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	for _, name := range f.Names {
		if err := cairn.ValidateName("workspace", name); err != nil {
			return nil, err
		}
	}
	list, err := s.store.FindWorkspaces(ctx, f)
	if err != nil {
		return nil, err
	}
	if f.Limit == 0 && len(list) > cairn.MaxUnpagedListLength {
		return nil, cairn.ErrListTooLarge()
	}
	return list, nil
}

// InspectWorkspace returns the workspace and the number of running
// containers mounting its volume, -1 when that cannot be known in time.
func (s *Service) InspectWorkspace(ctx context.Context, id string) (*cairn.WorkspaceDetail, error) {
	ws, err := s.store.FindWorkspace(ctx, id)
	if err != nil {
		return nil, err
	}
	return &cairn.WorkspaceDetail{Workspace: ws, MountCount: s.mountCount(ctx, ws), VolumeSizeBytes: s.volumeSize(ctx, ws)}, nil
}

// volumeSize is the size the runtime gave the workspace's volume, 0 for
// a NONE row, a runtime that does not size volumes, or one that did not
// answer in time (logged): the detail shows what is known.
func (s *Service) volumeSize(ctx context.Context, ws *cairn.Workspace) int64 {
	if ws.VolumeState == cairn.VolumeNone {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, mountCountTimeout)
	defer cancel()
	n, err := s.runtime.VolumeSize(ctx, ws.VolumeName)
	if err != nil {
		s.log.WarnContext(ctx, "read the volume's size", "workspace_id", ws.ID, "err", err)
	}
	return n
}

// mountCount takes the volume's existence from the row and only the running
// mounts from Docker: a NONE row has no volume by cairn's record, and a
// volume made or removed behind cairn's back is set right by the maintainer,
// so the count never contradicts the volume_state beside it.
func (s *Service) mountCount(ctx context.Context, ws *cairn.Workspace) int {
	if ws.VolumeState == cairn.VolumeNone {
		return -1
	}
	ctx, cancel := context.WithTimeout(ctx, mountCountTimeout)
	defer cancel()
	n, err := s.mounts.Count(ctx, ws.VolumeName)
	if err != nil {
		s.log.WarnContext(ctx, "count volume mounts", "workspace_id", ws.ID, "err", err)
	}
	return n
}

// RenameWorkspace changes the workspace's name; its volume keeps its name.
func (s *Service) RenameWorkspace(ctx context.Context, id, name string) (*cairn.Workspace, error) {
	if err := cairn.ValidateName("workspace", name); err != nil {
		return nil, err
	}
	return s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		old := ws.Name
		ws.Name = name
		if err := st.UpdateWorkspace(ctx, ws); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditRenameWorkspace, map[string]any{
			"workspace_id": ws.ID, "old_workspace_name": old, "new_workspace_name": name,
		})
	})
}

// SetWorkspaceDescription replaces the description; nil clears it. Not
// audited, as in the first cairn.
func (s *Service) SetWorkspaceDescription(ctx context.Context, id string, d *string) (*cairn.Workspace, error) {
	if err := cairn.ValidateDescription(d); err != nil {
		return nil, err
	}
	return s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		ws.Description = d
		return st.UpdateWorkspace(ctx, ws)
	})
}

// SetWorkspaceVolumeMetadata replaces the volume hint while no volume exists.
func (s *Service) SetWorkspaceVolumeMetadata(ctx context.Context, id string, m *cairn.VolumeMetadata) (*cairn.Workspace, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkVolumeSize(m); err != nil {
		return nil, err
	}
	return s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		if ws.VolumeState != cairn.VolumeNone {
			return cairn.Errorf(cairn.ReasonVolumeExists,
				"workspace %s already has a persistent volume ('%s' is '%s'); its volume metadata can no longer be changed",
				ws.ID, ws.VolumeName, ws.VolumeState)
		}
		ws.VolumeMetadata = m
		return st.UpdateWorkspace(ctx, ws)
	})
}

// checkVolumeSize refuses a size above the largest volume the runtime
// provisions (its MaxVolumeBytes; 0 bounds nothing). It is the one place
// the bound is checked: when a size is stored, and again before a volume
// is made, since the bound may have been lowered in between.
func (s *Service) checkVolumeSize(m *cairn.VolumeMetadata) error {
	if m == nil || m.SizeBytes == nil || s.runtime == nil {
		return nil
	}
	most := s.runtime.MaxVolumeBytes()
	if most <= 0 || *m.SizeBytes <= most {
		return nil
	}
	return cairn.Errorf(cairn.ReasonInvalidParameters,
		"volume_metadata.size_bytes must be at most %d (%s), the largest volume this server provisions; got %d",
		most, units.BytesSize(float64(most)), *m.SizeBytes)
}

// volumeSize is the size a new volume is made with: the workspace's
// size_bytes, or 0 for the runtime's default.
func volumeSize(ws *cairn.Workspace) int64 {
	if ws.VolumeMetadata == nil || ws.VolumeMetadata.SizeBytes == nil {
		return 0
	}
	return *ws.VolumeMetadata.SizeBytes
}

// updateWorkspace runs change on the locked row in one transaction, with
// updated_at moved, and returns the row as written.
func (s *Service) updateWorkspace(ctx context.Context, id string, change func(Store, *cairn.Workspace) error) (*cairn.Workspace, error) {
	var out *cairn.Workspace
	err := s.store.WithTx(ctx, func(st Store) error {
		ws, err := st.LockWorkspaceRow(ctx, id)
		if err != nil {
			return err
		}
		ws.UpdatedAt = s.now()
		if err := change(st, ws); err != nil {
			return err
		}
		out = ws
		return nil
	})
	return out, err
}

// DeleteWorkspace deletes a workspace without a volume, and its artifacts;
// their objects are released for the reaper's grace window.
func (s *Service) DeleteWorkspace(ctx context.Context, id string) error {
	return s.withVolumeLock(ctx, id, func(*cairn.Workspace) error { return s.deleteWorkspaceRow(ctx, id) })
}

// deleteWorkspaceRow deletes the locked row, refusing while a volume exists.
func (s *Service) deleteWorkspaceRow(ctx context.Context, id string) error {
	return s.store.WithTx(ctx, func(st Store) error {
		// The artifacts first: the cascade takes them after the workspace
		// row otherwise, the reverse of every artifact write.
		if err := st.LockArtifactRows(ctx, id); err != nil {
			return err
		}
		ws, err := st.LockWorkspaceRow(ctx, id)
		if err != nil {
			return err
		}
		if ws.VolumeState != cairn.VolumeNone {
			return cairn.Errorf(cairn.ReasonVolumeExists,
				"workspace %s still has a persistent volume ('%s' is '%s'); delete the volume first",
				ws.ID, ws.VolumeName, ws.VolumeState)
		}
		if err := st.DeleteWorkspace(ctx, id, s.now()); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditDeleteWorkspace, map[string]any{
			"workspace_id": ws.ID, "workspace_name": ws.Name,
		})
	})
}
