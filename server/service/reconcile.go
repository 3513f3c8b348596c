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
	VolumeUnchanged     VolumeCorrection = iota // in line, busy, or gone
	VolumeAdopted                               // a volume existed for a NONE row: prepared, now READY
	VolumeCleared                               // the volume of a READY row was gone: now NONE
	VolumeIssueRaised                           // a READY volume cannot take containers: its volume_issue is stored
	VolumeIssueResolved                         // it can again: its volume_issue is cleared
)

// ReconcileVolume brings one workspace's volume_state in line with the
// engine, as the maintainer does. It takes the workspace lock only if it is
// free (a busy workspace is left for the next pass), re-reads the row and
// inspects the volume: present for a NONE row ⇒ prep, then READY (adopt);
// absent for a READY row ⇒ NONE (clear); present for a READY row ⇒ ask the
// runtime whether it can take containers now and store the answer as the
// row's volume_issue. Only real changes are written, each audited with the
// maintainer as actor. A deleted row is no change.
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
	case exists:
		return s.reconcileIssue(ctx, ws)
	}
	return VolumeUnchanged, nil
}

// reconcileIssue stores why ws's READY volume cannot take containers now,
// or clears it, when that differs from what the row holds — so a volume
// that stays unusable is written (and announced) once, not every pass. A
// runtime that does not answer leaves the row as it is: not knowing is no
// news about the volume.
func (s *Service) reconcileIssue(ctx context.Context, ws *cairn.Workspace) (VolumeCorrection, error) {
	found, err := s.runtime.VolumeIssue(ctx, ws.VolumeName)
	if err != nil {
		return VolumeUnchanged, err
	}
	var issue *cairn.VolumeIssue
	if found != nil {
		issue = &cairn.VolumeIssue{Reason: found.Reason, Detail: found.Detail}
	}
	if sameIssue(issue, ws.VolumeIssue) {
		return VolumeUnchanged, nil
	}
	if err := s.setVolumeIssue(ctx, ws.ID, issue); err != nil {
		return VolumeUnchanged, err
	}
	log := s.log.With("workspace_id", ws.ID, "volume", ws.VolumeName)
	if issue == nil {
		log.InfoContext(ctx, "a workspace volume takes containers again; its volume_issue is cleared")
		return VolumeIssueResolved, nil
	}
	log.WarnContext(ctx, "a workspace volume cannot take containers now", "reason", issue.Reason, "detail", issue.Detail)
	return VolumeIssueRaised, nil
}

func sameIssue(a, b *cairn.VolumeIssue) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// setVolumeIssue writes the issue (nil clears it) with its audit row. The
// row change is what tells subscribers: it is a workspace.upserted.
func (s *Service) setVolumeIssue(ctx context.Context, id string, issue *cairn.VolumeIssue) error {
	_, err := s.updateWorkspace(ctx, id, func(st Store, ws *cairn.Workspace) error {
		ws.VolumeIssue = issue
		if err := st.UpdateWorkspace(ctx, ws); err != nil {
			return err
		}
		meta := map[string]any{"workspace_id": ws.ID, "workspace_name": ws.Name,
			"volume_name": ws.VolumeName, "reason": nil, "detail": nil}
		if issue != nil {
			meta["reason"], meta["detail"] = string(issue.Reason), issue.Detail
		}
		return s.audit(ctx, st, cairn.AuditWorkspaceVolumeIssue, meta)
	})
	return err
}
