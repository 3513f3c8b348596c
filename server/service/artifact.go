package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gabriel-vasile/mimetype"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// sniffBytes is how much of an object the MIME detector reads: what a stat
// sidecar returns of a volume file.
const sniffBytes = sidecar.HeadBytes

// MintStaging presigns an upload slot in the workspace; nothing is written.
func (s *Service) MintStaging(ctx context.Context, workspaceID string, r cairn.StagingRequest) (*cairn.Staging, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	if r.Size > s.maxObjectSize {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge,
			"artifact staged for workspace %s is %d bytes, over the %d byte single-PUT size cap",
			workspaceID, r.Size, s.maxObjectSize)
	}
	key := s.keys.stagingKey(workspaceID)
	expires := s.now().Add(s.putURLTTL)
	url, err := s.objects.PresignPut(ctx, key, PutSpec{
		Size: r.Size, SHA256B64: r.SHA256B64, ContentType: r.ContentType, TTL: s.putURLTTL,
	})
	if err != nil {
		return nil, err
	}
	return &cairn.Staging{Key: key, PutURL: url, ExpiresAt: expires}, nil
}

// RegisterArtifact turns an uploaded staging object into a new artifact.
// The name is checked before any store work, so a refused register never
// leaves a copied object behind; a row is inserted only after its object
// exists.
func (s *Service) RegisterArtifact(ctx context.Context, workspaceID string, c cairn.ArtifactCreate) (*cairn.Artifact, error) {
	if err := validateCreate(c); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	if err := s.checkNameFree(ctx, workspaceID, c.Name); err != nil {
		return nil, err
	}
	if err := s.keys.checkStagingKey(workspaceID, c.StagingKey); err != nil {
		return nil, err
	}
	obj, err := s.ingest(ctx, workspaceID, c.StagingKey)
	if err != nil {
		return nil, err
	}
	a, err := s.recordArtifact(ctx, workspaceID, c.Name, c.Description, obj)
	if err != nil {
		s.deleteObject(ctx, obj.key, "orphaned copy")
		return nil, err
	}
	s.deleteObject(ctx, c.StagingKey, "staging object")
	return a, nil
}

func validateCreate(c cairn.ArtifactCreate) error {
	if c.StagingKey == "" {
		return cairn.Errorf(cairn.ReasonInvalidParameters, "staging_object_key is required")
	}
	if err := cairn.ValidateName("artifact", c.Name); err != nil {
		return err
	}
	return cairn.ValidateDescription(c.Description)
}

// checkNameFree refuses a name another artifact of the workspace, in any
// state, already has.
func (s *Service) checkNameFree(ctx context.Context, workspaceID, name string) error {
	taken, err := s.store.ArtifactNameTaken(ctx, workspaceID, name)
	if err != nil {
		return err
	}
	if taken {
		return cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has an artifact named '%s'", workspaceID, name)
	}
	return nil
}

// object is content written under a new final key, with the digest its
// PUT was bound to ("" when the store did not report one).
type object struct {
	key       string
	size      int64
	mimeType  string
	sha256B64 string
}

// ingest checks a staging object and copies it to a new final key with its
// sniffed MIME type. The digest is the checksum the store verified at the
// staging PUT, as its stat reports it: never recomputed by reading the
// object. The staging object is left for the caller to delete.
func (s *Service) ingest(ctx context.Context, workspaceID, stagingKey string) (*object, error) {
	info, err := s.objects.Stat(ctx, stagingKey)
	if err != nil {
		return nil, stagingError(stagingKey, err)
	}
	if info.Size > s.maxObjectSize {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge, "staged object '%s' is %d bytes, over the %d byte single-PUT size cap",
			stagingKey, info.Size, s.maxObjectSize)
	}
	mimeType, err := s.sniff(ctx, stagingKey, info.Size)
	if err != nil {
		return nil, stagingError(stagingKey, err)
	}
	obj := &object{key: s.keys.finalKey(workspaceID), size: info.Size, mimeType: mimeType, sha256B64: info.SHA256B64}
	if err := s.objects.Copy(ctx, stagingKey, obj.key, mimeType); err != nil {
		return nil, stagingError(stagingKey, err)
	}
	return obj, nil
}

// sniff detects the MIME type from the object's first bytes. An empty
// object is never read: stores refuse a range over zero bytes.
func (s *Service) sniff(ctx context.Context, key string, size int64) (string, error) {
	if size == 0 {
		return mimetype.Detect(nil).String(), nil
	}
	head, err := s.objects.ReadHead(ctx, key, sniffBytes)
	if err != nil {
		return "", err
	}
	return mimetype.Detect(head).String(), nil
}

// stagingError names a staging object that vanished (never uploaded, or
// reaped); other store failures pass through.
func stagingError(key string, err error) error {
	if errors.Is(err, ErrObjectNotFound) {
		return &cairn.Error{Reason: cairn.ReasonStagingNotFound,
			Detail: fmt.Sprintf("staging object '%s' not found; upload it first", key), Err: err}
	}
	return err
}

// recordArtifact inserts the row and its audit event in one transaction.
func (s *Service) recordArtifact(ctx context.Context, workspaceID, name string, desc *string, obj *object) (*cairn.Artifact, error) {
	now := s.now()
	a := &cairn.Artifact{
		ID: ulid.Make().String(), WorkspaceID: workspaceID, Name: name, Description: desc,
		ObjectKey: obj.key, MIMEType: obj.mimeType, Size: obj.size, State: cairn.ArtifactRecorded,
		SHA256B64: obj.digest(), ContentWrittenAt: now, CreatedAt: now, UpdatedAt: now,
	}
	err := s.store.WithTx(ctx, func(st Store) error {
		if err := st.InsertArtifact(ctx, a); err != nil {
			return err
		}
		return s.audit(ctx, st, cairn.AuditNewArtifact, map[string]any{
			"workspace_id": workspaceID, "artifact_id": a.ID, "artifact_name": name,
			"object_key": obj.key, "mime_type": obj.mimeType, "size": obj.size,
		})
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// digest is the artifact column's value: nil when no digest is known.
func (o *object) digest() *string {
	if o.sha256B64 == "" {
		return nil
	}
	d := o.sha256B64
	return &d
}

// deleteObject removes an object best-effort; the reaper takes what is
// left, so a failure is only logged.
func (s *Service) deleteObject(ctx context.Context, key, what string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.objects.Delete(ctx, key); err != nil {
		s.log.WarnContext(ctx, "delete "+what, "object_key", key, "err", err)
	}
}
