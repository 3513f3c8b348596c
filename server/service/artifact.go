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

// sniffBytes is how much of an object the MIME detector reads: what a put
// sidecar returns of a volume file.
const sniffBytes = sidecar.HeadBytes

// MintStaging presigns an upload slot in the workspace under a fresh final
// key, so that register moves no bytes. With Multipart and a size above the
// threshold (or no digest to bind a single PUT to), it starts a multipart
// upload and returns its plan instead of a URL. With Stream, the URL binds
// the size only and has the store hash the bytes — or, under verify:
// server, the register does. Nothing is written to the database.
func (s *Service) MintStaging(ctx context.Context, workspaceID string, r cairn.StagingRequest) (*cairn.Staging, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	if r.Multipart && (r.Size > s.multipartThreshold || r.SHA256B64 == "") {
		return s.mintUpload(ctx, workspaceID, r.Size)
	}
	if limit := s.singlePutCap(); r.Size > limit {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge,
			"artifact staged for workspace %s is %d bytes, over the %d byte single-PUT size cap", workspaceID, r.Size, limit)
	}
	key := s.keys.finalKey(workspaceID)
	expires := s.now().Add(s.putURLTTL)
	url, err := s.objects.PresignPut(ctx, key, PutSpec{
		Size: r.Size, SHA256B64: r.SHA256B64, ContentType: r.ContentType, TTL: s.putURLTTL,
		StoreHashes: r.Stream && !s.verifyObjects,
	})
	if errors.Is(err, ErrStoreCannotHash) {
		return nil, cairn.Errorf(cairn.ReasonDigestRequired,
			"this object store does not compute the SHA-256 of an upload it receives: send sha256_b64 instead of stream")
	}
	if err != nil {
		return nil, err
	}
	return &cairn.Staging{Key: key, PutURL: url, ExpiresAt: expires}, nil
}

// singlePutCap is the largest object one PUT may carry: the configured
// maximum, within the store's own single-PUT limit.
func (s *Service) singlePutCap() int64 { return min(s.maxObjectSize, cairn.MaxPartSize) }

// RegisterArtifact turns an uploaded object into a new artifact. The name
// is checked before any store write (a single PUT's object is looked at
// while the database checks run); a row is inserted only after its object
// is known to exist, and a key registers once.
func (s *Service) RegisterArtifact(ctx context.Context, workspaceID string, c cairn.ArtifactCreate) (*cairn.Artifact, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	staged := cairn.Staged{Key: c.StagingKey, Upload: c.Upload, SHA256B64: c.SHA256B64}
	look := s.lookAhead(ctx, workspaceID, staged)
	if look != nil {
		defer func() { <-look.done }() // no store call outlives the register
	}
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return nil, err
	}
	if err := s.checkNameFree(ctx, workspaceID, c.Name); err != nil {
		return nil, err
	}
	obj, err := s.ingest(ctx, workspaceID, staged, look)
	if err != nil {
		return nil, err
	}
	a, err := s.recordArtifact(ctx, workspaceID, c.Name, c.Description, obj)
	s.settle(ctx, staged, obj, err)
	return a, err
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

// object is content written under a final key, with its verified digest
// ("" when the store did not report one).
type object struct {
	key       string
	size      int64
	mimeType  string
	sha256B64 string
	// copied is set when ingest copied a legacy staging object to key.
	copied bool
}

// ingest checks uploaded content and returns the object a row may name. A
// final key minted by MintStaging is taken where it lies — one HEAD and one
// ranged read, or, for a multipart upload, its completion and one read that
// hashes it; a legacy staging key is copied to a final key as before.
func (s *Service) ingest(ctx context.Context, workspaceID string, staged cairn.Staged, look *objectLook) (*object, error) {
	legacy, err := s.keys.checkStagingKey(workspaceID, staged.Key)
	if err != nil {
		return nil, err
	}
	if legacy && staged.Upload != nil {
		return nil, cairn.Errorf(cairn.ReasonStagingKeyInvalid, "staging object key '%s' names no multipart upload", staged.Key)
	}
	if legacy {
		return s.ingestCopy(ctx, workspaceID, staged.Key)
	}
	if err := s.checkKeyUnused(ctx, staged.Key); err != nil {
		return nil, err
	}
	if staged.Upload != nil {
		return s.ingestUpload(ctx, staged.Key, *staged.Upload)
	}
	return s.ingestPut(ctx, staged.Key, staged.SHA256B64, look)
}

// checkKeyUnused refuses a key that an artifact names or once named: a key
// is one artifact's content, ever, and a released one is on its way out.
func (s *Service) checkKeyUnused(ctx context.Context, key string) error {
	used, err := s.store.ObjectKeyUsed(ctx, key)
	if err != nil {
		return err
	}
	if used {
		return cairn.Errorf(cairn.ReasonStagingKeyUsed, "staging object key '%s' was already registered", key)
	}
	return nil
}

// ingestPut takes an object written by one PUT: its size and digest are
// what the store verified (a checksum-bound PUT) or computed (a streamed
// one), as its HEAD reports them. A streamed PUT's digest must be the one
// its uploader declares, or the object is deleted.
func (s *Service) ingestPut(ctx context.Context, key, declared string, look *objectLook) (*object, error) {
	obj, err := s.ingestStored(ctx, key, look)
	if err != nil || declared == "" || obj.sha256B64 == declared {
		return obj, err
	}
	s.deleteObject(ctx, key, "mismatched upload")
	return nil, cairn.Errorf(cairn.ReasonChecksumMismatch,
		"the stored object's SHA-256 is %s, not the %s declared; upload it again", obj.sha256B64, declared)
}

// ingestStored reads what the store says of an uploaded object: look's
// answers, or a look of its own when look is nil. Where the store reports
// no SHA-256 (a streamed PUT to a store that did not hash it), the object
// is read back and hashed.
func (s *Service) ingestStored(ctx context.Context, key string, look *objectLook) (*object, error) {
	if s.verifyObjects {
		return s.ingestVerified(ctx, key)
	}
	if look == nil {
		look = s.lookAt(ctx, key)
	}
	<-look.done
	info, head, headErr := look.info, look.head, look.headErr
	if look.infoErr != nil {
		return nil, look.infoErr
	}
	if info.Size == 0 {
		head, headErr = nil, nil
	}
	if headErr != nil {
		return nil, stagingError(key, headErr)
	}
	if cairn.ValidateSHA256B64(info.SHA256B64) != nil { // none, or a composite
		return s.hashObject(ctx, key, info.Size)
	}
	return &object{key: key, size: info.Size, mimeType: mimetype.Detect(head).String(), sha256B64: info.SHA256B64}, nil
}

// objectLook is an uploaded object's HEAD (through stagedInfo) and first
// bytes, asked for side by side: neither needs the other's answer, and a
// register's time is mostly these two round trips. The read of an empty
// object fails (stores refuse a range over zero bytes) and is then not
// needed. done closes once both answered.
type objectLook struct {
	done    chan struct{}
	info    *ObjectInfo
	infoErr error
	head    []byte
	headErr error
}

func (s *Service) lookAt(ctx context.Context, key string) *objectLook {
	l := &objectLook{done: make(chan struct{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		l.head, l.headErr = s.objects.ReadHead(ctx, key, sniffBytes)
	}()
	go func() {
		defer close(l.done)
		l.info, l.infoErr = s.stagedInfo(ctx, key)
		<-read
	}()
	return l
}

// lookAhead starts the look at a register's object while the database
// checks run, when it is a single PUT under a final key of the workspace
// (nothing else is looked at before the checks); nil otherwise. The look
// only reads: a register refused meanwhile leaves nothing.
func (s *Service) lookAhead(ctx context.Context, workspaceID string, staged cairn.Staged) *objectLook {
	if staged.Upload != nil || s.verifyObjects {
		return nil
	}
	if legacy, err := s.keys.checkStagingKey(workspaceID, staged.Key); err != nil || legacy {
		return nil
	}
	return s.lookAt(ctx, staged.Key)
}

// ingestVerified is ingestPut on a store not trusted to check checksums:
// the object is read back and hashed, and must hash to the SHA-256 the
// store reports for it (the one its URL bound). A mismatch deletes it.
func (s *Service) ingestVerified(ctx context.Context, key string) (*object, error) {
	info, err := s.stagedInfo(ctx, key)
	if err != nil {
		return nil, err
	}
	obj, err := s.hashObject(ctx, key, info.Size)
	if err != nil {
		return nil, err
	}
	if claimed := info.SHA256B64; cairn.ValidateSHA256B64(claimed) == nil && claimed != obj.sha256B64 {
		s.deleteObject(ctx, key, "mismatched upload")
		return nil, cairn.Errorf(cairn.ReasonChecksumMismatch,
			"the stored object's SHA-256 is %s, not the %s its upload URL bound; upload it again", obj.sha256B64, claimed)
	}
	return obj, nil
}

// stagedInfo stats an uploaded object and applies the size cap and the
// register window: an object older than the window may be reaped as never
// referenced while this register runs, so it is refused, not recorded.
func (s *Service) stagedInfo(ctx context.Context, key string) (*ObjectInfo, error) {
	info, err := s.objects.Stat(ctx, key)
	if err != nil {
		return nil, stagingError(key, err)
	}
	if info.Size > s.maxObjectSize {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge, "staged object '%s' is %d bytes, over the %d byte size cap",
			key, info.Size, s.maxObjectSize)
	}
	if age := s.now().Sub(info.LastModified); age > s.registerWindow {
		return nil, cairn.Errorf(cairn.ReasonStagingNotFound,
			"staging object '%s' was uploaded %s ago, past the %s register window; upload it again",
			key, age.Round(time.Second), s.registerWindow)
	}
	return info, nil
}

// ingestCopy is the register of a key minted under the staging prefix
// before register stopped copying: stat, sniff, and a copy to a new final
// key with the sniffed type. The caller deletes the staging object once
// the row exists.
func (s *Service) ingestCopy(ctx context.Context, workspaceID, stagingKey string) (*object, error) {
	info, err := s.stagedInfo(ctx, stagingKey)
	if err != nil {
		return nil, err
	}
	if info.Size > cairn.MaxPartSize {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge, "staged object '%s' is %d bytes, over the %d byte single-part copy limit",
			stagingKey, info.Size, int64(cairn.MaxPartSize))
	}
	mimeType, err := s.sniff(ctx, stagingKey, info.Size)
	if err != nil {
		return nil, stagingError(stagingKey, err)
	}
	obj := &object{key: s.keys.finalKey(workspaceID), size: info.Size, mimeType: mimeType, sha256B64: info.SHA256B64, copied: true}
	if err := s.objects.Copy(ctx, stagingKey, obj.key, mimeType); err != nil {
		return nil, stagingError(stagingKey, err)
	}
	return obj, nil
}

// settle cleans up after a register or replace wrote (or failed to write)
// its row. A legacy copy loses its staging object once recorded, or the
// copy when not. An object uploaded straight to its final key stays when
// the row could not be written: the client may register it again (under
// another name, say), and the reaper takes it by age otherwise.
func (s *Service) settle(ctx context.Context, staged cairn.Staged, obj *object, rowErr error) {
	switch {
	case !obj.copied:
	case rowErr != nil:
		s.deleteObject(ctx, obj.key, "orphaned copy")
	default:
		s.deleteObject(ctx, staged.Key, "staging object")
	}
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
	if errors.Is(err, ErrObjectNotFound) || errors.Is(err, ErrUploadNotFound) {
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

// deleteObject removes an object best-effort: a failure is logged and
// remembered for the next full pass of this process; the reaper takes by
// age what that misses.
func (s *Service) deleteObject(ctx context.Context, key, what string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.objects.Delete(ctx, key); err != nil {
		s.log.WarnContext(ctx, "delete "+what+"; the next pass retries", "object_key", key, "err", err)
		s.leftovers.Add(Leftover{Key: key})
	}
}
