package service

import (
	"context"
	"strconv"
	"sync"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// packPartSize is the part a pack sidecar fills before it asks for the URL
// of its upload: it holds two (one filling, one sending) in a 128 MiB
// container. 10 000 parts make 160 GiB, past any archive cairn keeps.
const packPartSize = 16 << 20

// UnpackLimits bound what one unpack may write.
type UnpackLimits struct {
	MaxEntries int   // default 10 000
	MaxBytes   int64 // unpacked, default 10 GiB
	MaxRatio   int   // unpacked bytes per archive byte, default 200
}

func (l UnpackLimits) withDefaults() UnpackLimits {
	if l.MaxEntries == 0 {
		l.MaxEntries = 10000
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = 10 << 30
	}
	if l.MaxRatio == 0 {
		l.MaxRatio = 200
	}
	return l
}

// packFromVolume packs the directory src into one archive under a new final
// key. Its size is known only once packed, so the pack sidecar asks for
// each upload URL as it goes (the Dialog): the whole archive as one PUT
// when it fits one part, else a multipart upload part by part — every URL
// bound to the size and SHA-256 of the bytes it will carry, which the store
// verifies. The whole archive's digest is the sidecar's, taken over the
// same bytes; before a row may name the object, the store must hold exactly
// the parts granted (or, for one PUT, the size and MD5 sent).
func (s *Service) packFromVolume(ctx context.Context, ws *cairn.Workspace, subject, src, format string) (*object, error) {
	p := &packer{s: s, key: s.keys.finalKey(ws.ID)}
	res, run, err := s.runTransfer(ctx, ws, withProgress(ctx, SidecarSpec{
		Command: sidecar.CommandPack, Role: "cairn-pack", Subject: subject,
		Env: map[string]string{sidecar.EnvSourcePath: src, sidecar.EnvFormat: format,
			sidecar.EnvMaxSize: strconv.FormatInt(s.maxObjectSize, 10), sidecar.EnvPartSize: strconv.Itoa(packPartSize)},
		Dialog: p.grant,
	}), p.secrets)
	if err == nil {
		err = transferVerdict(sidecar.CommandPack, res, run, p.secrets()...)
	}
	var obj *object
	if err == nil {
		obj, err = p.settle(ctx, res, format)
	}
	if err != nil {
		p.discard(ctx)
		return nil, err
	}
	s.onTransfer("volume_to_store", obj.size)
	return obj, nil
}

// packer grants a pack sidecar its upload URLs and remembers what it
// granted.
type packer struct {
	s   *Service
	key string

	mu       sync.Mutex
	urls     []string
	object   *sidecar.Need  // the one PUT granted, if so
	uploadID string         // the multipart upload, once started
	parts    []sidecar.Need // the parts granted, in order
}

func (p *packer) secrets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.urls...)
}

// grant answers one Need. A need out of order or past a bound is an error
// that ends the run: the sidecar is cairn's own, so it is a defect, not a
// caller's mistake — except the size cap, which is the source's.
func (p *packer) grant(ctx context.Context, need sidecar.Need) (sidecar.Grant, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := cairn.ValidateSHA256B64(need.SHA256B64); err != nil || need.Size < 0 {
		return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSidecarFailed, "the pack sidecar asked for a URL without a valid size and digest")
	}
	total := need.Size
	for _, part := range p.parts {
		total += part.Size
	}
	if total > p.s.maxObjectSize {
		return sidecar.Grant{}, cairn.Errorf(cairn.ReasonObjectTooLarge,
			"the archive grows past the %d byte cap of one artifact", p.s.maxObjectSize)
	}
	url, err := p.presign(ctx, need)
	if err != nil {
		return sidecar.Grant{}, err
	}
	p.urls = append(p.urls, url)
	return sidecar.Grant{URL: url}, nil
}

func (p *packer) presign(ctx context.Context, need sidecar.Need) (string, error) {
	ttl := p.s.sidecarTimeout + sidecarURLSlack
	switch {
	case need.Need == sidecar.NeedObject && p.object == nil && len(p.parts) == 0:
		p.object = &need
		return p.s.objects.PresignPut(ctx, p.key, PutSpec{Size: need.Size, SHA256B64: need.SHA256B64, TTL: ttl})
	case need.Need == sidecar.NeedPart && p.object == nil && need.Number == len(p.parts)+1 &&
		need.Number <= MaxParts && need.Size <= packPartSize:
		if p.uploadID == "" {
			id, err := p.s.objects.CreateUpload(ctx, p.key)
			if err != nil {
				return "", err
			}
			p.uploadID = id
		}
		p.parts = append(p.parts, need)
		return p.s.objects.PresignPart(ctx, p.key, p.uploadID, PartSpec{Number: need.Number, Size: need.Size,
			SHA256B64: need.SHA256B64, TTL: ttl})
	}
	return "", cairn.Errorf(cairn.ReasonSidecarFailed, "the pack sidecar asked for a %q URL (part %d) out of order", need.Need, need.Number)
}

// settle checks that the store holds exactly what was granted and that the
// sidecar's totals agree, completing a multipart upload, and returns the
// object a row may name.
func (p *packer) settle(ctx context.Context, res *sidecar.Result, format string) (*object, error) {
	if res.Size == nil || res.SHA256B64 == "" {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the pack sidecar reported success without the size and digest of its archive")
	}
	obj := &object{key: p.key, size: *res.Size, mimeType: cairn.ArchiveMIME(format), sha256B64: res.SHA256B64}
	switch {
	case p.object != nil:
		return obj, p.checkObject(ctx, res)
	case len(p.parts) > 0:
		return obj, p.complete(ctx, *res.Size, res.SHA256B64)
	}
	return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the pack sidecar reported success without uploading its archive")
}

func (p *packer) checkObject(ctx context.Context, res *sidecar.Result) error {
	info, err := p.s.objects.Stat(ctx, p.key)
	if err != nil {
		return err
	}
	if info.Size != p.object.Size || info.Size != *res.Size || (res.MD5 != "" && info.ETag != res.MD5) {
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the object store holds %d bytes with ETag %q, not the %d bytes the pack sidecar sent",
			info.Size, info.ETag, *res.Size)
	}
	return nil
}

// complete assembles the parts once the store lists each one granted, with
// the size and digest granted, and their sum is the archive's size. A
// store that lists parts without their checksums (SeaweedFS) verified each
// against its URL but cannot say so: the assembled archive is read back
// and must hash to the sidecar's digest.
func (p *packer) complete(ctx context.Context, size int64, digest string) error {
	held, err := p.s.objects.ListParts(ctx, p.key, p.uploadID)
	if err != nil {
		return err
	}
	var sum int64
	unlisted := false
	for i, want := range p.parts {
		if i >= len(held) || held[i].Number != want.Number || held[i].Size != want.Size ||
			(held[i].SHA256B64 != want.SHA256B64 && held[i].SHA256B64 != "") {
			return cairn.Errorf(cairn.ReasonSidecarFailed, "the object store does not hold part %d of the archive as the pack sidecar sent it", want.Number)
		}
		unlisted = unlisted || held[i].SHA256B64 == ""
		sum += want.Size
	}
	if len(held) != len(p.parts) || sum != size {
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the object store holds %d parts (%d bytes), not the %d parts of %d bytes the pack sidecar sent",
			len(held), sum, len(p.parts), size)
	}
	if err := p.s.objects.CompleteUpload(ctx, p.key, p.uploadID, held); err != nil || !unlisted {
		return err
	}
	obj, err := p.s.hashObject(ctx, p.key, size)
	if err != nil {
		return err
	}
	if obj.sha256B64 != digest {
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the assembled archive hashes to %s, not the %s the pack sidecar sent", obj.sha256B64, digest)
	}
	return nil
}

// discard removes what a failed pack may have stored, best-effort: what it
// misses is never referenced; the next full pass of this process retries
// it (the store may have been down), and the reapers take it by age.
func (p *packer) discard(ctx context.Context) {
	if p.uploadID != "" {
		if err := p.s.objects.AbortUpload(context.WithoutCancel(ctx), p.key, p.uploadID); err != nil {
			p.s.log.Warn("abort the upload of a failed pack; the next pass retries", "err", err)
			p.s.leftovers.Add(Leftover{Key: p.key, UploadID: p.uploadID})
		}
	}
	p.s.deleteObject(ctx, p.key, "object of a failed pack")
}

// UnpackArtifact unpacks a RECORDED archive artifact into the new directory
// targetDir of its workspace volume: an unpack sidecar reads it through a
// presigned GET and writes a fresh directory beside the target, renamed
// into place only once every entry passed every check.
func (s *Service) UnpackArtifact(ctx context.Context, artifactID, targetDir string) (*cairn.UnpackResult, error) {
	if err := cairn.RequireParam("target_dir", targetDir); err != nil {
		return nil, err
	}
	a, err := s.store.FindArtifact(ctx, artifactID)
	if err != nil {
		return nil, err
	}
	if err := cairn.ValidateVolumePath(targetDir); err != nil {
		return nil, err
	}
	format := cairn.ArchiveFormatOf(a.MIMEType)
	if format == "" {
		return nil, cairn.Errorf(cairn.ReasonArchiveInvalid, "artifact %s is '%s', not a tar.gz or zip archive", a.ID, a.MIMEType)
	}
	var out *cairn.UnpackResult
	err = s.withTransferLock(ctx, a.WorkspaceID, func(ws *cairn.Workspace) error {
		a, err := s.recordedArtifact(ctx, artifactID)
		if err != nil {
			return err
		}
		out, err = s.unpack(ctx, ws, a, targetDir, format)
		return err
	})
	return out, err
}

func (s *Service) unpack(ctx context.Context, ws *cairn.Workspace, a *cairn.Artifact, targetDir, format string) (*cairn.UnpackResult, error) {
	url, err := s.objects.PresignGet(ctx, a.ObjectKey, s.sidecarTimeout+sidecarURLSlack, "")
	if err != nil {
		return nil, err
	}
	l := s.unpackLimits
	res, run, err := s.runTransfer(ctx, ws, withProgress(ctx, SidecarSpec{
		Command: sidecar.CommandUnpack, Role: "cairn-unpack", Subject: a.ID,
		Env: map[string]string{sidecar.EnvTargetPath: targetDir, sidecar.EnvURL: url, sidecar.EnvFormat: format,
			sidecar.EnvMaxSize: strconv.FormatInt(a.Size, 10), sidecar.EnvArchiveSHA256: deref(a.SHA256B64),
			sidecar.EnvMaxEntries: strconv.Itoa(l.MaxEntries), sidecar.EnvMaxBytes: strconv.FormatInt(l.MaxBytes, 10),
			sidecar.EnvMaxRatio: strconv.Itoa(l.MaxRatio)},
	}), func() []string { return []string{url} })
	if err == nil {
		err = transferVerdict(sidecar.CommandUnpack, res, run, url)
	}
	if err != nil {
		return nil, s.flagIfGone(ctx, a, err)
	}
	if res.Size == nil {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the unpack sidecar reported success without the bytes it wrote")
	}
	s.onTransfer("store_to_volume", a.Size)
	return &cairn.UnpackResult{TargetDir: res.UnpackedPath, Entries: res.Entries, Bytes: *res.Size}, nil
}

// recordedArtifact reads an artifact that must have a servable object.
func (s *Service) recordedArtifact(ctx context.Context, id string) (*cairn.Artifact, error) {
	a, err := s.store.FindArtifact(ctx, id)
	if err != nil {
		return nil, err
	}
	if a.State != cairn.ArtifactRecorded {
		return nil, cairn.Errorf(cairn.ReasonObjectMissing,
			"artifact %s is '%s'; only a 'RECORDED' artifact has a servable object", a.ID, a.State)
	}
	return a, nil
}
