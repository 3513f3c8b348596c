package service

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"strings"

	"github.com/gabriel-vasile/mimetype"

	"github.com/cairn-dev/cairn"
)

// Multipart uploads. The server keeps no state for
// them: the store holds the upload and its parts, the client holds the
// key, the upload ID and its plan, and every call names all three.

// mintUpload starts a multipart upload of a fresh final key and returns its
// plan. Parts are PartSize bytes but the last; the size fixes how many.
func (s *Service) mintUpload(ctx context.Context, workspaceID string, size int64) (*cairn.Staging, error) {
	if size > s.maxObjectSize {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge,
			"artifact staged for workspace %s is %d bytes, over the %d byte size cap", workspaceID, size, s.maxObjectSize)
	}
	key := s.keys.finalKey(workspaceID)
	id, err := s.objects.CreateUpload(ctx, key)
	if err != nil {
		return nil, err
	}
	partSize := s.planPartSize(size)
	plan := &cairn.UploadPlan{ID: id, PartSize: partSize, PartCount: int(max(1, (size+partSize-1)/partSize))}
	return &cairn.Staging{Key: key, ExpiresAt: s.now().Add(s.registerWindow), Upload: plan}, nil
}

// planPartSize is the configured part size, grown (in whole MiB) when the
// object would otherwise need more than MaxParts parts.
func (s *Service) planPartSize(size int64) int64 {
	const mib = 1 << 20
	need := (size + MaxParts - 1) / MaxParts
	need = (need + mib - 1) / mib * mib
	return max(s.partSize, need)
}

// MintParts presigns uploads of the asked parts, each bound to its size and
// SHA-256: the store refuses a part whose bytes differ. The upload must
// still be open, so a stale plan learns it at once, not at the PUT.
func (s *Service) MintParts(ctx context.Context, workspaceID string, r cairn.PartRequest) (*cairn.PartURLs, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkUploadKey(ctx, workspaceID, r.StagingKey); err != nil {
		return nil, err
	}
	if _, err := s.objects.ListParts(ctx, r.StagingKey, r.UploadID); err != nil {
		return nil, stagingError(r.StagingKey, err)
	}
	out := &cairn.PartURLs{Parts: make([]cairn.PartURL, len(r.Parts)), ExpiresAt: s.now().Add(s.putURLTTL)}
	for i, p := range r.Parts {
		url, err := s.objects.PresignPart(ctx, r.StagingKey, r.UploadID,
			PartSpec{Number: p.Number, Size: p.Size, SHA256B64: p.SHA256B64, TTL: s.putURLTTL})
		if err != nil {
			return nil, err
		}
		out.Parts[i] = cairn.PartURL{Number: p.Number, PutURL: url}
	}
	return out, nil
}

// UploadedParts lists what the store received of an upload, each part
// with the SHA-256 the store verified it against.
func (s *Service) UploadedParts(ctx context.Context, workspaceID, key, uploadID string) ([]cairn.UploadedPart, error) {
	if err := validateUploadRef(key, uploadID); err != nil {
		return nil, err
	}
	if err := s.checkUploadKey(ctx, workspaceID, key); err != nil {
		return nil, err
	}
	parts, err := s.objects.ListParts(ctx, key, uploadID)
	if err != nil {
		return nil, stagingError(key, err)
	}
	out := make([]cairn.UploadedPart, len(parts))
	for i, p := range parts {
		out[i] = cairn.UploadedPart{Number: p.Number, Size: p.Size, SHA256B64: p.SHA256B64, ETag: strings.Trim(p.ETag, `"`)}
	}
	return out, nil
}

// AbortUpload discards an upload and its parts: a client whose source
// changed starts over without leaving them to the maintainer.
func (s *Service) AbortUpload(ctx context.Context, workspaceID, key, uploadID string) error {
	if err := validateUploadRef(key, uploadID); err != nil {
		return err
	}
	if err := s.checkUploadKey(ctx, workspaceID, key); err != nil {
		return err
	}
	return s.objects.AbortUpload(ctx, key, uploadID)
}

func validateUploadRef(key, uploadID string) error {
	if err := cairn.RequireParam("staging_object_key", key); err != nil {
		return err
	}
	return (&cairn.StagedUpload{ID: uploadID, Size: 1}).Validate()
}

// checkUploadKey accepts a final key minted for the workspace, which exists.
func (s *Service) checkUploadKey(ctx context.Context, workspaceID, key string) error {
	if _, err := s.store.FindWorkspace(ctx, workspaceID); err != nil {
		return err
	}
	legacy, err := s.keys.checkStagingKey(workspaceID, key)
	if err == nil && legacy {
		err = cairn.Errorf(cairn.ReasonStagingKeyInvalid, "staging object key '%s' names no multipart upload", key)
	}
	return err
}

// ingestUpload completes a multipart upload and verifies what the store
// assembled. The parts must be 1…N without a gap and add up to the declared
// size, checked before anything is assembled. The recorded SHA-256 is
// computed here, from one read of the stored object, so it rests on the
// stored bytes and not on the uploader's word (each part was verified
// against its own digest on the way in); the read also gives the head the
// type is sniffed from. A register retried after the completion finds the
// upload gone and the object there, and verifies that.
func (s *Service) ingestUpload(ctx context.Context, key string, up cairn.StagedUpload) (*object, error) {
	parts, err := s.objects.ListParts(ctx, key, up.ID)
	switch {
	case errors.Is(err, ErrUploadNotFound):
	case err != nil:
		return nil, err
	default:
		if err := s.checkParts(key, up, parts); err != nil {
			return nil, err
		}
		if err := s.objects.CompleteUpload(ctx, key, up.ID, parts); err != nil {
			return nil, stagingError(key, err)
		}
	}
	info, err := s.stagedInfo(ctx, key)
	if err != nil {
		return nil, err
	}
	if info.Size != up.Size {
		return nil, cairn.Errorf(cairn.ReasonUploadIncomplete, "the stored object '%s' is %d bytes, not the %d declared",
			key, info.Size, up.Size)
	}
	obj, err := s.hashObject(ctx, key, info.Size)
	if err != nil {
		return nil, err
	}
	if up.SHA256B64 != "" && obj.sha256B64 != up.SHA256B64 {
		s.deleteObject(ctx, key, "mismatched upload")
		return nil, cairn.Errorf(cairn.ReasonChecksumMismatch,
			"the assembled object's SHA-256 is %s, not the %s declared; upload it again", obj.sha256B64, up.SHA256B64)
	}
	return obj, nil
}

// checkParts refuses a part list that cannot make the declared object: a
// gap, or a total other than the declared size or over the cap.
func (s *Service) checkParts(key string, up cairn.StagedUpload, parts []Part) error {
	var total int64
	for i, p := range parts {
		if p.Number != i+1 {
			return cairn.Errorf(cairn.ReasonUploadIncomplete, "upload of '%s' lacks part %d; upload it, then register", key, i+1)
		}
		total += p.Size
	}
	if total > s.maxObjectSize {
		return cairn.Errorf(cairn.ReasonObjectTooLarge, "the parts of '%s' hold %d bytes, over the %d byte size cap",
			key, total, s.maxObjectSize)
	}
	if total != up.Size {
		return cairn.Errorf(cairn.ReasonUploadIncomplete, "the %d parts of '%s' hold %d bytes; %d were declared",
			len(parts), key, total, up.Size)
	}
	return nil
}

// hashObject reads the whole object once: its SHA-256 and its MIME type.
func (s *Service) hashObject(ctx context.Context, key string, size int64) (*object, error) {
	body, err := s.objects.Read(ctx, key)
	if err != nil {
		return nil, stagingError(key, err)
	}
	defer body.Close()
	h := sha256.New()
	head := &headWriter{limit: sniffBytes}
	n, err := readAhead(body, io.MultiWriter(h, head))
	if err != nil {
		return nil, &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: "the object store failed to read the object", Err: err}
	}
	if n != size {
		return nil, cairn.Errorf(cairn.ReasonStoreUnavailable, "the object store served %d of the object's %d bytes", n, size)
	}
	return &object{key: key, size: size, mimeType: mimetype.Detect(head.buf).String(),
		sha256B64: base64.StdEncoding.EncodeToString(h.Sum(nil))}, nil
}

// Read-ahead of hashObject: the store's read and the hash each take about
// as long (≈ 0.85 s per GiB here), so they run side by side.
const (
	readAheadChunk = 1 << 20
	readAheadDepth = 4
)

// readAhead copies r to w with the reads on their own goroutine, a few
// chunks ahead of the writes; memory stays at readAheadDepth chunks.
func readAhead(r io.Reader, w io.Writer) (int64, error) {
	type chunk struct {
		b   []byte
		err error
	}
	free := make(chan []byte, readAheadDepth)
	for range readAheadDepth {
		free <- make([]byte, readAheadChunk)
	}
	full := make(chan chunk, readAheadDepth)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(full)
		for {
			var b []byte
			select {
			case b = <-free:
			case <-stop:
				return
			}
			n, err := io.ReadFull(r, b)
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			full <- chunk{b[:n], err}
			if err != nil {
				return
			}
		}
	}()
	var total int64
	for c := range full {
		if _, err := w.Write(c.b); err != nil {
			return total, err
		}
		total += int64(len(c.b))
		if c.err == io.EOF {
			return total, nil
		}
		if c.err != nil {
			return total, c.err
		}
		free <- c.b[:cap(c.b)]
	}
	return total, nil
}

// headWriter keeps the first limit bytes written to it.
type headWriter struct {
	buf   []byte
	limit int
}

func (w *headWriter) Write(p []byte) (int, error) {
	if room := w.limit - len(w.buf); room > 0 {
		w.buf = append(w.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
