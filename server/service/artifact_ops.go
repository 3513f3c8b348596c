package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"

	"github.com/cairn-dev/cairn"
)

// FindArtifacts lists a workspace's artifacts; without a state filter only
// RECORDED ones, as the first cairn did.
func (s *Service) FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	for _, name := range f.Names {
		if err := cairn.ValidateName("artifact", name); err != nil {
			return nil, err
		}
	}
	if len(f.States) == 0 {
		f.States = []cairn.ArtifactState{cairn.ArtifactRecorded}
	}
	if _, err := s.store.FindWorkspace(ctx, f.WorkspaceID); err != nil {
		return nil, err
	}
	list, err := s.store.FindArtifacts(ctx, f)
	if err != nil {
		return nil, err
	}
	if f.Limit == 0 && len(list) > cairn.MaxUnpagedListLength {
		return nil, cairn.ErrListTooLarge()
	}
	return list, nil
}

// GetArtifact returns an artifact and, on request, a presigned GET valid
// for min(TTL, the configured maximum).
func (s *Service) GetArtifact(ctx context.Context, id string, g cairn.ArtifactGet) (*cairn.ArtifactDetail, error) {
	a, err := s.store.FindArtifact(ctx, id)
	if err != nil {
		return nil, err
	}
	d := &cairn.ArtifactDetail{Artifact: a}
	if !g.Presign {
		return d, nil
	}
	if a.State != cairn.ArtifactRecorded {
		return nil, cairn.Errorf(cairn.ReasonObjectMissing,
			"artifact %s is '%s'; only a 'RECORDED' artifact has a servable object", a.ID, a.State)
	}
	if err := s.objectThere(ctx, a); err != nil {
		return nil, err
	}
	ttl := s.getURLMaxTTL
	if g.TTL > 0 && g.TTL < ttl {
		ttl = g.TTL
	}
	if d.GetURL, err = s.objects.PresignGet(ctx, a.ObjectKey, ttl, a.MIMEType); err != nil {
		return nil, err
	}
	return d, nil
}

// ReadArtifact reads a RECORDED artifact of at most max bytes whole from
// the store and checks it against the row's size and SHA-256.
func (s *Service) ReadArtifact(ctx context.Context, id string, max int64) (*cairn.ArtifactContent, error) {
	a, err := s.store.FindArtifact(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case a.State != cairn.ArtifactRecorded:
		return nil, cairn.Errorf(cairn.ReasonObjectMissing,
			"artifact %s is '%s'; only a 'RECORDED' artifact has content to read", a.ID, a.State)
	case a.Size > max:
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge,
			"artifact %s is %d bytes; a read through the server returns at most %d", a.ID, a.Size, max)
	}
	data, err := s.readObject(ctx, a)
	if err != nil {
		return nil, err
	}
	if err := checkContent(a, data); err != nil {
		return nil, err
	}
	return &cairn.ArtifactContent{Artifact: a, Data: data}, nil
}

// readObject reads an artifact's object, at most one byte past its
// recorded size; one the store says is gone is flagged (flagGone).
func (s *Service) readObject(ctx context.Context, a *cairn.Artifact) ([]byte, error) {
	body, err := s.objects.Read(ctx, a.ObjectKey)
	if errors.Is(err, ErrObjectNotFound) {
		return nil, s.flagGone(ctx, a)
	}
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var buf bytes.Buffer
	if _, err := readAhead(io.LimitReader(body, a.Size+1), &buf); err != nil {
		return nil, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: "the object store failed to read the object", Err: err}
	}
	return buf.Bytes(), nil
}

// checkContent compares bytes read from the store with the artifact's
// row: its size and, where recorded, its SHA-256.
func checkContent(a *cairn.Artifact, data []byte) error {
	if int64(len(data)) != a.Size {
		return cairn.Errorf(cairn.ReasonChecksumMismatch,
			"the store holds %d bytes for artifact %s, which has %d", len(data), a.ID, a.Size)
	}
	if a.SHA256B64 == nil {
		return nil
	}
	sum := sha256.Sum256(data)
	if base64.StdEncoding.EncodeToString(sum[:]) != *a.SHA256B64 {
		return cairn.Errorf(cairn.ReasonChecksumMismatch,
			"the store's bytes of artifact %s do not match its SHA-256", a.ID)
	}
	return nil
}

// objectThere checks, with a HEAD, that a RECORDED artifact's object is in
// the store before a URL to it is handed out. One the store says is gone
// is flagged MISSING_OBJECT on the spot — its event goes out as for the
// maintainer's flag — and refused with object_missing. A store that cannot
// answer proves nothing: the URL is minted as before (signing is local),
// and the download says what the store says.
func (s *Service) objectThere(ctx context.Context, a *cairn.Artifact) error {
	_, err := s.objects.Stat(ctx, a.ObjectKey)
	if !errors.Is(err, ErrObjectNotFound) {
		return nil
	}
	return s.flagGone(ctx, a)
}

// flagGone flags an artifact whose object the store says is gone
// MISSING_OBJECT, its event going out as for the maintainer's flag, and
// returns the refusal: object_missing.
func (s *Service) flagGone(ctx context.Context, a *cairn.Artifact) error {
	if _, ferr := s.store.FlagMissing(ctx, a, s.now()); ferr != nil {
		return ferr
	}
	return cairn.Errorf(cairn.ReasonObjectMissing,
		"the object of artifact %s is gone from the store; it is now 'MISSING_OBJECT' — replace its content", a.ID)
}

// RenameArtifact changes the name within the workspace.
func (s *Service) RenameArtifact(ctx context.Context, id, name string) (*cairn.Artifact, error) {
	if err := cairn.ValidateName("artifact", name); err != nil {
		return nil, err
	}
	return s.updateArtifact(ctx, id, func(st Store, a *cairn.Artifact) error {
		old := a.Name
		a.Name = name
		if err := st.UpdateArtifact(ctx, a); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditRenameArtifact, map[string]any{
			"workspace_id": a.WorkspaceID, "artifact_id": a.ID, "old_artifact_name": old, "new_artifact_name": name,
		})
	})
}

// SetArtifactDescription replaces the description; nil clears it. Not
// audited, as in the first cairn.
func (s *Service) SetArtifactDescription(ctx context.Context, id string, d *string) (*cairn.Artifact, error) {
	if err := cairn.ValidateDescription(d); err != nil {
		return nil, err
	}
	return s.updateArtifact(ctx, id, func(st Store, a *cairn.Artifact) error {
		a.Description = d
		return st.UpdateArtifact(ctx, a)
	})
}

// ReplaceContent points the artifact at newly uploaded content and marks
// it RECORDED. The old object is released, not deleted, so a GET URL minted
// before keeps working through the grace window. Concurrent replacements
// are last-writer-wins; each releases the key it replaced.
func (s *Service) ReplaceContent(ctx context.Context, id string, src cairn.Staged) (*cairn.Artifact, error) {
	if err := src.Validate(); err != nil {
		return nil, err
	}
	a, err := s.store.FindArtifact(ctx, id)
	if err != nil {
		return nil, err
	}
	obj, err := s.ingest(ctx, a.WorkspaceID, src, nil)
	if err != nil {
		return nil, err
	}
	updated, err := s.writeContent(ctx, id, obj)
	s.settle(ctx, src, obj, err)
	return updated, err
}

// writeContent switches the row to obj, releasing the key it had.
func (s *Service) writeContent(ctx context.Context, id string, obj *object) (*cairn.Artifact, error) {
	return s.updateArtifact(ctx, id, func(st Store, a *cairn.Artifact) error {
		old := *a
		a.ObjectKey, a.MIMEType, a.Size, a.SHA256B64 = obj.key, obj.mimeType, obj.size, obj.digest()
		a.State, a.ContentWrittenAt = cairn.ArtifactRecorded, a.UpdatedAt
		if err := st.UpdateArtifact(ctx, a); err != nil {
			return err
		}
		if err := st.ReleaseObject(ctx, old.ObjectKey, a.WorkspaceID, a.UpdatedAt); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditUpdateArtifactObject, map[string]any{
			"workspace_id": a.WorkspaceID, "artifact_id": a.ID, "artifact_name": a.Name,
			"old_object_key": old.ObjectKey, "old_mime_type": old.MIMEType, "old_size": old.Size,
			"new_object_key": obj.key, "new_mime_type": obj.mimeType, "new_size": obj.size,
		})
	})
}

// DeleteArtifact deletes the row and releases its object; the reaper
// deletes the object after the grace window. An unknown ID succeeds.
func (s *Service) DeleteArtifact(ctx context.Context, id string) error {
	return s.store.WithTx(ctx, func(st Store) error {
		a, err := st.LockArtifactRow(ctx, id)
		if cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		if err := st.DeleteArtifact(ctx, id); err != nil {
			return err
		}
		if err := st.ReleaseObject(ctx, a.ObjectKey, a.WorkspaceID, s.now()); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditDeleteArtifact, map[string]any{
			"workspace_id": a.WorkspaceID, "artifact_id": a.ID, "artifact_name": a.Name, "object_key": a.ObjectKey,
		})
	})
}

// updateArtifact runs change on the locked row in one transaction with
// updated_at moved, and returns the row as written.
func (s *Service) updateArtifact(ctx context.Context, id string, change func(Store, *cairn.Artifact) error) (*cairn.Artifact, error) {
	var out *cairn.Artifact
	err := s.store.WithTx(ctx, func(st Store) error {
		a, err := st.LockArtifactRow(ctx, id)
		if err != nil {
			return err
		}
		a.UpdatedAt = s.now()
		if err := change(st, a); err != nil {
			return err
		}
		out = a
		return nil
	})
	return out, err
}
