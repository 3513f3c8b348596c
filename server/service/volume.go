package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// SetupVolume creates the workspace's volume if absent (adopting an existing
// one), prepares its root, and marks the workspace READY. A repeat on a READY
// workspace repairs the root's mode and is audited like the first call.
func (s *Service) SetupVolume(ctx context.Context, id string) error {
	return s.withVolumeLock(ctx, id, func(ws *cairn.Workspace) (err error) {
		exists, err := s.runtime.VolumeExists(ctx, ws.VolumeName)
		if err != nil {
			return err
		}
		if !exists {
			if err := s.checkVolumeSize(ws.VolumeMetadata); err != nil {
				return err
			}
			labels := map[string]string{"cairn.app": s.appName, "cairn.workspace": ws.ID}
			if err := s.runtime.CreateVolume(ctx, ws.VolumeName, labels, volumeSize(ws)); err != nil {
				return err
			}
			defer func() {
				if err != nil {
					s.discardVolume(ctx, ws)
				}
			}()
		}
		if err := s.prepVolume(ctx, ws); err != nil {
			return err
		}
		if err := s.unarchive(ctx, ws); err != nil {
			return err
		}
		return s.setVolumeState(ctx, ws.ID, cairn.VolumeReady)
	})
}

// discardVolume removes the volume a failed setup made, so that a setup
// the client hung up on (or whose prep failed) leaves the workspace as it
// found it, NONE with no volume, rather than a volume for the next sweep
// to adopt. A volume that was there before the setup is never removed.
func (s *Service) discardVolume(ctx context.Context, ws *cairn.Workspace) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := s.runtime.RemoveVolume(ctx, ws.VolumeName); err != nil {
		s.log.WarnContext(ctx, "remove the volume of a failed setup; the next sweep adopts it", "workspace_id", ws.ID, "err", err)
	}
}

// TeardownVolume removes the workspace's volume, never by force (the engine
// refuses while a container mounts it), and marks the workspace NONE.
func (s *Service) TeardownVolume(ctx context.Context, id string) error {
	return s.withVolumeLock(ctx, id, func(ws *cairn.Workspace) error {
		// The browse container is cairn's own reader: it goes first, so
		// that only a user's container can keep the volume in use.
		if err := s.runtime.StopBrowse(ctx, ws.ID); err != nil {
			return err
		}
		if err := s.runtime.RemoveVolume(ctx, ws.VolumeName); err != nil {
			return s.nameShells(ctx, ws, err)
		}
		return s.setVolumeState(ctx, ws.ID, cairn.VolumeNone)
	})
}

// withVolumeLock looks the workspace up, then runs op under its exclusive
// lock with the row as read after the lock was taken.
func (s *Service) withVolumeLock(ctx context.Context, id string, op func(*cairn.Workspace) error) error {
	if _, err := s.store.FindWorkspace(ctx, id); err != nil {
		return err
	}
	release, err := s.store.LockWorkspace(ctx, id, LockExclusive)
	if err != nil {
		return err
	}
	defer release()
	ws, err := s.store.FindWorkspace(ctx, id)
	if err != nil {
		return err
	}
	return op(ws)
}

// setVolumeState writes the state with its audit row. Every write by a
// request is audited, READY → READY included. A volume that is gone has no
// issue left: NONE clears the row's volume_issue.
func (s *Service) setVolumeState(ctx context.Context, id string, state cairn.VolumeState) error {
	_, err := s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		ws.VolumeState = state
		if state == cairn.VolumeNone {
			ws.VolumeIssue = nil
		}
		if err := st.UpdateWorkspace(ctx, ws); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditWorkspaceVolumeState, map[string]any{
			"workspace_id": ws.ID, "workspace_name": ws.Name,
			"volume_name": ws.VolumeName, "new_state": string(state),
		})
	})
	return err
}

// prepVolume runs the prep sidecar: root:root, mode 0777 on the mount root,
// so tool containers of any UID can write the workspace.
func (s *Service) prepVolume(ctx context.Context, ws *cairn.Workspace) error {
	run, err := s.runtime.RunSidecar(ctx, SidecarSpec{
		Command:     sidecar.CommandPrep,
		Role:        "volume-prep",
		Subject:     ws.ID,
		WorkspaceID: ws.ID,
		VolumeName:  ws.VolumeName,
		Env:         map[string]string{sidecar.EnvMountRoot: cairn.MountPath},
	})
	if err != nil {
		return err
	}
	res, ok := sidecar.ParseResult(run.Output)
	if !ok || !res.OK || run.ExitCode != 0 {
		return cairn.Errorf(cairn.ReasonVolumePrepFailed,
			"volume preparation sidecar failed (exit code %d); output: %s",
			run.ExitCode, sidecar.Redact(string(run.Output)))
	}
	return nil
}
