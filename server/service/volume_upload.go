package service

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/gabriel-vasile/mimetype"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// uploadFromVolume stores a volume file under a new final key in one
// container and one read of the file: a put sidecar
// checks the source, streams it to a PUT presigned without a length or
// digest, and reports the size, SHA-256, MD5 and head of the bytes it
// sent. Before any row exists the object must be exactly those bytes: its
// size, and its ETag — for a single PUT, the MD5 of what the store
// received. The SHA-256 recorded is the sidecar's, taken in the same pass;
// the MIME type is sniffed from its head. A failure that may have stored
// the object deletes it best-effort. subject names the sidecar (the workspace for a new
// artifact, the artifact for an update).
func (s *Service) uploadFromVolume(ctx context.Context, ws *cairn.Workspace, subject, src string) (*object, error) {
	key := s.keys.finalKey(ws.ID)
	// No content type either: a presigned GET serves the row's MIME type.
	url, err := s.objects.PresignPut(ctx, key, PutSpec{Size: AnySize, TTL: s.sidecarTimeout + sidecarURLSlack})
	if err != nil {
		return nil, err
	}
	// One PUT carries at most 5 GiB. A bigger volume file would need a
	// multipart upload driven by the sidecar, which is left for later.
	limit := s.singlePutCap()
	res, run, err := s.runTransfer(ctx, ws, withProgress(ctx, SidecarSpec{
		Command: sidecar.CommandPut, Role: "cairn-upload", Subject: subject,
		Env: map[string]string{sidecar.EnvSourcePath: src, sidecar.EnvURL: url,
			sidecar.EnvMaxSize: strconv.FormatInt(limit, 10)},
	}), only(url))
	if err == nil {
		err = transferVerdict(sidecar.CommandPut, res, run, url)
	}
	var obj *object
	if err == nil {
		obj, err = s.checkPut(ctx, key, src, res, limit)
	}
	if err != nil {
		if mayHaveStored(res) {
			s.discardPut(ctx, key, ws.ID, res == nil)
		}
		return nil, err
	}
	s.onTransfer("volume_to_store", obj.size)
	return obj, nil
}

// discardPut deletes what a failed put may have stored. A put that gave
// no result may still run — the engine failed under it and its container
// lives on — and its PUT can land after this delete while its URL is
// valid: the key is then released too, so that an object landing late is
// accounted for and the storage sweep deletes it once the release's grace
// is over.
func (s *Service) discardPut(ctx context.Context, key, workspaceID string, mayStillRun bool) {
	s.deleteObject(ctx, key, "object of a failed volume upload")
	if !mayStillRun {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := s.store.ReleaseObject(ctx, key, workspaceID, s.now()); err != nil {
		s.log.WarnContext(ctx, "release the key of a volume upload that may still land", "object_key", key, "err", err)
	}
}

// mayHaveStored reports whether a failed put may have left an object
// behind: unless the sidecar's line says it stopped before the store kept
// anything (a refused source, a store refusal or outage), assume it did. A
// run without a line may have been stopped after its PUT; source_changed
// may come after one.
func mayHaveStored(res *sidecar.Result) bool {
	return res == nil || res.OK || res.ReasonText() == sidecar.ReasonSourceChanged
}

// checkPut compares the stored object with what the put sidecar reports
// having sent, and returns the object a row may name.
func (s *Service) checkPut(ctx context.Context, key, src string, res *sidecar.Result, limit int64) (*object, error) {
	if res.Size == nil || res.MD5 == "" || res.SHA256B64 == "" {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the put sidecar reported success without the size and digests of what it sent")
	}
	size := *res.Size
	if size > limit {
		return nil, cairn.Errorf(cairn.ReasonObjectTooLarge, "source file '%s' is %d bytes, over the %d byte cap of one upload from a volume",
			src, size, limit)
	}
	info, err := s.objects.Stat(ctx, key)
	if errors.Is(err, ErrObjectNotFound) {
		return nil, &cairn.Error{Reason: cairn.ReasonSidecarFailed, Err: err,
			Detail: "the put sidecar reported an upload that the object store does not hold"}
	}
	if err != nil {
		return nil, err
	}
	if info.Size != size || info.ETag != res.MD5 {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed,
			"the object store holds %d bytes with ETag %q, not the %d bytes with MD5 %s that the put sidecar read from '%s' and sent",
			info.Size, info.ETag, size, res.MD5, src)
	}
	return &object{key: key, size: size, mimeType: mimetype.Detect(res.Head).String(), sha256B64: res.SHA256B64}, nil
}
