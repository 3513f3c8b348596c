package service

import (
	"context"
	"encoding/base64"
	"io"

	"github.com/cairn-dev/cairn"
)

// held is content the server holds itself (a shell recording), to be
// written to the store and registered as an artifact.
type held struct {
	body     io.Reader // seekable: a store reached without TLS signs the payload
	size     int64
	sha256   []byte
	mimeType string
}

// storeHeld writes h under a fresh final key and registers it as a new
// artifact named name, as RegisterArtifact registers an upload: the name
// checked first, the object taken where it lies (Stat, with the size cap
// and the digest the store verified), the row and its NEW_ARTIFACT audit
// in one transaction. The type is h's, not a sniffed one. An object
// without a row is deleted. Reasons: those of RegisterArtifact,
// object_too_large.
func (s *Service) storeHeld(ctx context.Context, workspaceID, name string, desc *string, h held) (*cairn.Artifact, error) {
	if err := cairn.ValidateName("artifact", name); err != nil {
		return nil, err
	}
	if err := cairn.ValidateDescription(desc); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	if err := s.checkNameFree(ctx, workspaceID, name); err != nil {
		return nil, err
	}
	if limit := s.singlePutCap(); h.size > limit {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge, "%d bytes are over the %d byte single-PUT size cap", h.size, limit)
	}
	key := s.keys.finalKey(workspaceID)
	if err := s.objects.Put(ctx, key, h.body, h.size, h.sha256, h.mimeType); err != nil {
		return nil, err
	}
	obj, err := s.ingest(ctx, workspaceID, cairn.Staged{Key: key}, nil)
	if err == nil && obj.sha256B64 == "" {
		obj.sha256B64 = base64.StdEncoding.EncodeToString(h.sha256) // the store verified it at the PUT
	}
	var a *cairn.Artifact
	if err == nil {
		obj.mimeType = h.mimeType
		a, err = s.recordArtifact(ctx, workspaceID, name, desc, obj)
	}
	if err != nil {
		s.deleteObject(ctx, key, "held object without a row")
		return nil, err
	}
	return a, nil
}
