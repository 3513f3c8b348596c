package service

import (
	"context"

	"github.com/cairn-dev/cairn"
)

// MaintainerActor is the audit actor of the maintainer's corrections.
const MaintainerActor = "maintainer"

// VolumeCorrection is what ReconcileVolume did to a workspace.
type VolumeCorrection int

const (
	VolumeUnchanged VolumeCorrection = iota // in line, busy, or gone
	VolumeAdopted                           // a volume existed for a NONE row: prepared, now READY
	VolumeCleared                           // the volume of a READY row was gone: now NONE
)

// ReconcileVolume brings one workspace's volume_state in line with the
// engine, as the maintainer does. It takes the workspace lock only if it is
// free (a busy workspace is left for the next pass), re-reads the row and
// inspects the volume: present for a NONE row ⇒ prep, then READY (adopt);
// absent for a READY row ⇒ NONE (clear). Only real changes are written,
// each audited with the maintainer as actor. A deleted row is no change.
func (s *Service) ReconcileVolume(ctx context.Context, id string) (VolumeCorrection, error) {
	release, ok, err := s.store.TryLockWorkspace(ctx, id)
	if err != nil || !ok {
		return VolumeUnchanged, err
	}
	defer release()
	ws, err := s.store.FindWorkspace(ctx, id)
	if cairn.ErrorReason(err) == cairn.ReasonWorkspaceNotFound {
		return VolumeUnchanged, nil
	}
	if err != nil {
		return VolumeUnchanged, err
	}
	exists, err := s.runtime.VolumeExists(ctx, ws.VolumeName)
	if err != nil {
		return VolumeUnchanged, err
	}
	ctx = cairn.WithActor(ctx, MaintainerActor)
	switch {
	case exists && ws.VolumeState == cairn.VolumeNone:
		if err := s.prepVolume(ctx, ws); err != nil {
			return VolumeUnchanged, err
		}
		return VolumeAdopted, s.setVolumeState(ctx, id, cairn.VolumeReady)
	case !exists && ws.VolumeState == cairn.VolumeReady:
		return VolumeCleared, s.setVolumeState(ctx, id, cairn.VolumeNone)
	}
	return VolumeUnchanged, nil
}
