package service

import (
	"context"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

var _ cairn.VolumeTransferService = (*Service)(nil)

// ArtifactFromVolume stores a volume file as a new artifact: presign a PUT
// to a new final key → one put sidecar (check, stream, hash) → check the
// object against what the sidecar sent → record, all under the workspace's
// shared lock. An object a failure leaves behind is deleted best-effort;
// what that misses is never referenced, and the reaper takes it by age.
func (s *Service) ArtifactFromVolume(ctx context.Context, workspaceID string, c cairn.VolumeArtifactCreate) (*cairn.Artifact, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	if err := s.checkNameFree(ctx, workspaceID, c.Name); err != nil {
		return nil, err
	}
	validPath := cairn.ValidateVolumePath
	if c.Format != "" {
		validPath = cairn.ValidateListPath // the whole volume packs too
	}
	if err := validPath(c.SourcePath); err != nil {
		return nil, err
	}
	var out *cairn.Artifact
	err := s.withTransferLock(ctx, workspaceID, func(ws *cairn.Workspace) error {
		obj, err := s.fromVolume(ctx, ws, workspaceID, c)
		if err != nil {
			return err
		}
		if out, err = s.recordArtifact(ctx, workspaceID, c.Name, c.Description, obj); err != nil {
			s.deleteObject(ctx, obj.key, "unrecorded object")
			return err
		}
		return nil
	})
	return out, err
}

// fromVolume stores a volume file as it is, or packs a directory when a
// format is asked for.
func (s *Service) fromVolume(ctx context.Context, ws *cairn.Workspace, subject string, c cairn.VolumeArtifactCreate) (*object, error) {
	if c.Format != "" {
		return s.packFromVolume(ctx, ws, subject, c.SourcePath, c.Format)
	}
	return s.uploadFromVolume(ctx, ws, subject, c.SourcePath)
}

// only is the secrets of a run handed one URL.
func only(url string) func() []string { return func() []string { return []string{url} } }

// UpdateFromVolume replaces an artifact's content from a volume file. There
// is no state gate: a MISSING_OBJECT artifact is repaired.
func (s *Service) UpdateFromVolume(ctx context.Context, artifactID, sourcePath string) (*cairn.Artifact, error) {
	if err := cairn.RequireParam("source_path", sourcePath); err != nil {
		return nil, err
	}
	a, err := s.store.FindArtifact(ctx, artifactID)
	if err != nil {
		return nil, err
	}
	if err := cairn.ValidateVolumePath(sourcePath); err != nil {
		return nil, err
	}
	var out *cairn.Artifact
	err = s.withTransferLock(ctx, a.WorkspaceID, func(ws *cairn.Workspace) error {
		obj, err := s.uploadFromVolume(ctx, ws, artifactID, sourcePath)
		if err != nil {
			return err
		}
		if out, err = s.writeContent(ctx, artifactID, obj); err != nil {
			s.deleteObject(ctx, obj.key, "unrecorded object")
			return err
		}
		return nil
	})
	return out, err
}

// LoadIntoVolume writes a RECORDED artifact's content to a volume file.
func (s *Service) LoadIntoVolume(ctx context.Context, artifactID, targetPath string) error {
	if err := cairn.RequireParam("target_path", targetPath); err != nil {
		return err
	}
	a, err := s.store.FindArtifact(ctx, artifactID)
	if err != nil {
		return err
	}
	if _, err := s.store.FindWorkspace(ctx, a.WorkspaceID); err != nil {
		return err
	}
	if err := cairn.ValidateVolumePath(targetPath); err != nil {
		return err
	}
	return s.withTransferLock(ctx, a.WorkspaceID, func(ws *cairn.Workspace) error {
		a, err := s.store.FindArtifact(ctx, artifactID)
		if err != nil {
			return err
		}
		if a.State != cairn.ArtifactRecorded {
			return cairn.Errorf(cairn.ReasonObjectMissing,
				"artifact %s is '%s'; only a 'RECORDED' artifact has a servable object", a.ID, a.State)
		}
		// The URL must outlive the sidecar, whatever the REST maximum.
		url, err := s.objects.PresignGet(ctx, a.ObjectKey, s.sidecarTimeout+sidecarURLSlack, "")
		if err != nil {
			return err
		}
		res, run, err := s.runTransfer(ctx, ws, withProgress(ctx, SidecarSpec{
			Command: sidecar.CommandDownload, Role: "cairn-download", Subject: a.ID,
			Env: map[string]string{sidecar.EnvTargetPath: targetPath, sidecar.EnvURL: url},
		}), only(url))
		if err != nil {
			return err
		}
		if err := transferVerdict(sidecar.CommandDownload, res, run, url); err != nil {
			return s.flagIfGone(ctx, a, err)
		}
		s.onTransfer("store_to_volume", a.Size)
		return nil
	})
}

// flagIfGone flags a MISSING_OBJECT on the spot when a download's verdict
// err is the store's 404 for its object (the event goes out from the
// row), and returns err either way.
func (s *Service) flagIfGone(ctx context.Context, a *cairn.Artifact, err error) error {
	if cairn.ErrorReason(err) != cairn.ReasonObjectMissing {
		return err
	}
	if _, ferr := s.store.FlagMissing(context.WithoutCancel(ctx), a, s.now()); ferr != nil {
		s.log.Error("flag a vanished object", "artifact_id", a.ID, "err", ferr)
	}
	return err
}

// withTransferLock holds the workspace's lock in shared mode, so transfers
// run side by side but never across a volume setup or teardown, and checks
// the volume is READY once the lock is held.
func (s *Service) withTransferLock(ctx context.Context, workspaceID string, op func(*cairn.Workspace) error) error {
	release, err := s.store.LockWorkspace(ctx, workspaceID, LockShared)
	if err != nil {
		return err
	}
	defer release()
	ws, err := s.store.FindWorkspace(ctx, workspaceID)
	if err != nil {
		return err
	}
	if ws.VolumeState != cairn.VolumeReady {
		return cairn.Errorf(cairn.ReasonVolumeNotReady, "workspace %s has no runtime volume (volume state '%s')",
			ws.ID, ws.VolumeState)
	}
	s.markActive(ctx, ws.ID)
	return op(ws)
}

// runTransfer runs a transfer sidecar on the transfer network. secrets
// names the URLs handed to it, by the end of the run, for redaction.
func (s *Service) runTransfer(ctx context.Context, ws *cairn.Workspace, spec SidecarSpec, secrets func() []string) (*sidecar.Result, *SidecarRun, error) {
	spec.WorkspaceID, spec.VolumeName, spec.Transfer = ws.ID, ws.VolumeName, true
	spec.Env[sidecar.EnvMountRoot] = cairn.MountPath
	run, err := s.runtime.RunSidecar(ctx, spec)
	if err != nil {
		return nil, nil, redactError(err, secrets()...)
	}
	res, ok := sidecar.ParseResult(run.Output)
	if !ok {
		return nil, nil, noResultLine(spec.Command, run, secrets()...)
	}
	return &res, run, nil
}

// withProgress makes a transfer report its progress to the context's
// listener (cairn.WithProgress), when there is one: the sidecar then asks
// CAIRN_PROGRESS's questions, answered here, and passes its other Needs on
// to the spec's own dialog, if it has one.
func withProgress(ctx context.Context, spec SidecarSpec) SidecarSpec {
	report := cairn.ProgressFrom(ctx)
	if report == nil {
		return spec
	}
	spec.Env[sidecar.EnvProgress] = "1"
	next := spec.Dialog
	spec.Dialog = func(ctx context.Context, need sidecar.Need) (sidecar.Grant, error) {
		switch {
		case need.Need == sidecar.NeedProgress:
			report(need.Size, need.Total)
			return sidecar.Grant{}, nil
		case next == nil:
			return sidecar.Grant{Error: "a transfer asks only for progress, not " + need.Need}, nil
		}
		return next(ctx, need)
	}
	return spec
}
