package service

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"sync"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/sidecar"
)

// restoreMaxBytes bounds the files a restore writes; the volume's own
// size bounds them first.
const restoreMaxBytes = 1 << 40

// CreateSnapshot snapshots a workspace's volume. A point-in-time snapshot
// holds the workspace's lock exclusively, so no transfer or file operation
// of cairn's runs meanwhile, and refuses a volume another container
// mounts; a live one shares the lock as transfers do.
func (s *Service) CreateSnapshot(ctx context.Context, workspaceID string, c cairn.SnapshotCreate) (*cairn.Snapshot, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := s.snapshotsConfigured(); err != nil {
		return nil, err
	}
	var snap *cairn.Snapshot
	take := func(ws *cairn.Workspace) (err error) {
		snap, err = s.snapshot(ctx, ws, c)
		return err
	}
	if c.Live {
		return snap, s.withTransferLock(ctx, workspaceID, take)
	}
	return snap, s.withVolumeLock(ctx, workspaceID, func(ws *cairn.Workspace) error {
		if err := s.requireUnmounted(ctx, ws); err != nil {
			return err
		}
		return take(ws)
	})
}

func (s *Service) snapshotsConfigured() error {
	if s.snapshots == nil {
		return cairn.Internal("this server keeps no snapshots", nil)
	}
	return nil
}

// requireUnmounted holds for a READY volume no container of a user mounts
// (cairn's own writer is removed first: it only writes while the caller's
// lock is not held).
func (s *Service) requireUnmounted(ctx context.Context, ws *cairn.Workspace) error {
	if ws.VolumeState != cairn.VolumeReady {
		return cairn.Errorf(cairn.ReasonVolumeNotReady, "workspace %s has no runtime volume (volume state '%s')",
			ws.ID, ws.VolumeState)
	}
	if err := s.runtime.StopWriter(ctx, ws.ID); err != nil {
		return err
	}
	counts, err := s.runtime.MountCounts(ctx, []string{ws.VolumeName})
	if err != nil {
		return err
	}
	if n := counts[ws.VolumeName]; n > 0 {
		return cairn.Errorf(cairn.ReasonVolumeInUse,
			"%d running containers mount workspace %s's volume; stop them first (a snapshot may be taken live)", n, ws.ID)
	}
	return nil
}

// snapshot runs the snapshot sidecar and records what it stored.
func (s *Service) snapshot(ctx context.Context, ws *cairn.Workspace, c cairn.SnapshotCreate) (*cairn.Snapshot, error) {
	run := &snapshotRun{s: s, content: map[string]ContentLocation{}, sums: map[string]string{}}
	env := map[string]string{sidecar.EnvMaxEntries: strconv.Itoa(sidecar.DefaultMaxSnapshotEntries)}
	if err := run.previous(ctx, ws, env); err != nil {
		return nil, err
	}
	res, sc, err := s.runTransfer(ctx, ws, withProgress(ctx, SidecarSpec{
		Command: sidecar.CommandSnapshot, Role: "cairn-snapshot", Subject: ws.ID, Env: env, Dialog: run.grant,
	}), run.secrets)
	if err == nil {
		err = snapshotVerdict(sidecar.CommandSnapshot, res, sc, run.secrets()...)
	}
	var snap *cairn.Snapshot
	if err == nil {
		snap, err = run.commit(ctx, ws, c, res)
	}
	if err != nil {
		run.discard(ctx)
		return nil, err
	}
	s.onTransfer("volume_to_store", res.UploadedBytes)
	return snap, nil
}

// previous names the workspace's newest manifest to the sidecar, whose
// files' digests it takes for files that did not change since.
func (r *snapshotRun) previous(ctx context.Context, ws *cairn.Workspace, env map[string]string) error {
	last, err := r.s.snapshots.LatestSnapshot(ctx, ws.ID)
	if err != nil || last == nil {
		return err
	}
	url, err := r.s.objects.PresignGet(ctx, last.ManifestKey, r.s.sidecarTimeout+sidecarURLSlack, "")
	if err != nil {
		return err
	}
	r.urls = append(r.urls, url)
	env[sidecar.EnvURL], env[sidecar.EnvArchiveSHA256] = url, last.ManifestSHA256
	return nil
}

// snapshotVerdict is transferVerdict, with content or a manifest that did
// not check read as a corrupt snapshot, and a tree past the bounds as one
// too large to snapshot.
func snapshotVerdict(command string, res *sidecar.Result, run *SidecarRun, urls ...string) error {
	if !res.OK {
		switch res.ReasonText() {
		case sidecar.ReasonDigestMismatch, sidecar.ReasonManifestInvalid:
			return cairn.Errorf(cairn.ReasonSnapshotCorrupt, "%s", sidecar.Redact(res.ErrorText(), urls...))
		case sidecar.ReasonTooManyEntries, sidecar.ReasonSnapshotTooLarge:
			return cairn.Errorf(cairn.ReasonSnapshotTooLarge, "%s", sidecar.Redact(res.ErrorText(), urls...))
		}
	}
	return transferVerdict(command, res, run, urls...)
}

// snapshotRun grants one snapshot sidecar its answers and URLs, and
// remembers what it granted.
type snapshotRun struct {
	s *Service

	mu       sync.Mutex
	urls     []string
	objects  []string                   // every key granted
	sums     map[string]string          // each key's granted digest
	content  map[string]ContentLocation // digests uploaded in this run
	manifest *sidecar.Need
	manKey   string
}

func (r *snapshotRun) secrets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.urls...)
}

// grant answers one Need. A malformed need is cairn's own sidecar failing:
// an error that ends the run.
func (r *snapshotRun) grant(ctx context.Context, need sidecar.Need) (sidecar.Grant, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch need.Need {
	case sidecar.NeedHave:
		return r.have(ctx, need.Digests)
	case sidecar.NeedBlob:
		digest, err := needDigest(need)
		if err != nil {
			return sidecar.Grant{}, err
		}
		return r.upload(ctx, need, func(key string) { r.content[digest] = ContentLocation{ObjectKey: key, Size: need.Size} })
	case sidecar.NeedBundle:
		if err := checkBundle(need); err != nil {
			return sidecar.Grant{}, err
		}
		return r.upload(ctx, need, func(key string) {
			for _, m := range need.Members {
				r.content[m.SHA256] = ContentLocation{ObjectKey: key, Offset: m.Offset, Size: m.Size, Bundled: true}
			}
		})
	case sidecar.NeedManifest:
		if r.manifest != nil {
			break
		}
		if _, err := needDigest(need); err != nil {
			return sidecar.Grant{}, err
		}
		r.manifest = &need
		return r.upload(ctx, need, func(key string) { r.manKey = key })
	}
	return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar asked for %q out of turn", need.Need)
}

// have answers which digests neither the store nor this run holds.
func (r *snapshotRun) have(ctx context.Context, digests []string) (sidecar.Grant, error) {
	if len(digests) == 0 || len(digests) > sidecar.HaveBatch {
		return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar asked about %d digests at once", len(digests))
	}
	for _, d := range digests {
		if !isHexDigest(d) {
			return sidecar.Grant{}, cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar asked about a malformed digest")
		}
	}
	present, err := r.s.snapshots.PresentContent(ctx, digests)
	if err != nil {
		return sidecar.Grant{}, err
	}
	var g sidecar.Grant
	for i, d := range digests {
		if _, ours := r.content[d]; !present[d] && !ours {
			g.Missing = append(g.Missing, i)
		}
	}
	return g, nil
}

// upload records a new object and grants the PUT of exactly need's bytes.
func (r *snapshotRun) upload(ctx context.Context, need sidecar.Need, granted func(key string)) (sidecar.Grant, error) {
	key := r.s.keys.snapshotKey()
	if err := r.s.snapshots.PendSnapshotObject(ctx, key, need.Size); err != nil {
		return sidecar.Grant{}, err
	}
	r.objects, r.sums[key] = append(r.objects, key), need.SHA256B64
	url, err := r.s.objects.PresignPut(ctx, key, PutSpec{Size: need.Size, SHA256B64: need.SHA256B64,
		TTL: r.s.sidecarTimeout + sidecarURLSlack})
	if err != nil {
		return sidecar.Grant{}, err
	}
	r.urls = append(r.urls, url)
	granted(key)
	return sidecar.Grant{URL: url}, nil
}

// needDigest checks a blob's or manifest's size and digest, and returns
// the digest in hex.
func needDigest(need sidecar.Need) (string, error) {
	raw, err := base64.StdEncoding.DecodeString(need.SHA256B64)
	if err != nil || len(raw) != 32 || need.Size <= 0 {
		return "", cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar asked for a URL without a valid size and digest")
	}
	return hex.EncodeToString(raw), nil
}

// checkBundle checks that a bundle's members lie back to back and fill it.
func checkBundle(need sidecar.Need) error {
	if _, err := needDigest(need); err != nil {
		return err
	}
	if len(need.Members) == 0 || len(need.Members) > sidecar.BundleMaxMembers || need.Size > sidecar.BundleMaxBytes {
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar asked for a bundle of %d members, %d bytes", len(need.Members), need.Size)
	}
	var at int64
	for _, m := range need.Members {
		if !isHexDigest(m.SHA256) || m.Offset != at || m.Size <= 0 {
			return cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar asked for a bundle whose members do not lie back to back")
		}
		at += m.Size
	}
	if at != need.Size {
		return cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar's bundle members add up to %d bytes, not %d", at, need.Size)
	}
	return nil
}

func isHexDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// commit reads the manifest the sidecar stored, checks it is the one it
// reported, and records the snapshot with every digest it names.
func (r *snapshotRun) commit(ctx context.Context, ws *cairn.Workspace, c cairn.SnapshotCreate, res *sidecar.Result) (*cairn.Snapshot, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.manifest == nil || res.SHA256B64 != r.manifest.SHA256B64 || res.Size == nil {
		return nil, cairn.Errorf(cairn.ReasonSidecarFailed, "the snapshot sidecar reported success without the manifest it stored")
	}
	if err := r.verify(ctx); err != nil {
		return nil, err
	}
	m, err := r.s.readManifest(ctx, r.manKey, r.manifest.SHA256B64, sidecar.DefaultMaxSnapshotEntries)
	if err != nil {
		return nil, err
	}
	snap := &cairn.Snapshot{
		ID: uuid.NewString(), WorkspaceID: ws.ID, Name: c.Name, Live: c.Live,
		Entries: m.entries, Bytes: m.bytes, UploadedBytes: res.UploadedBytes, Skipped: res.Skipped,
		ManifestSHA256: r.manifest.SHA256B64, CreatedBy: cairn.ActorFrom(ctx), CreatedAt: r.s.now(),
	}
	if snap.Name == "" {
		snap.Name = "snap-" + ulid.Make().String()
	}
	audit := r.s.auditEvent(ctx, cairn.AuditSnapshotCreated, map[string]any{
		"workspace_id": ws.ID, "snapshot_id": snap.ID, "snapshot_name": snap.Name, "live": snap.Live,
		"entries": snap.Entries, "bytes": snap.Bytes, "uploaded_bytes": snap.UploadedBytes,
	})
	commit := SnapshotCommit{Objects: r.objects, ManifestKey: r.manKey, Content: r.content, Refs: m.digests}
	if err := r.s.snapshots.CommitSnapshot(ctx, snap, commit, audit); err != nil {
		return nil, err
	}
	r.objects = nil // committed: nothing to discard
	return snap, nil
}

// verify hashes every object of the run when the store does not check the
// digest a PUT URL binds.
func (r *snapshotRun) verify(ctx context.Context) error {
	if !r.s.verifyObjects {
		return nil
	}
	for _, key := range r.objects {
		info, err := r.s.objects.Stat(ctx, key)
		if err != nil {
			return err
		}
		obj, err := r.s.hashObject(ctx, key, info.Size)
		if err != nil {
			return err
		}
		if obj.sha256B64 != r.sums[key] {
			return cairn.Errorf(cairn.ReasonSidecarFailed, "the store holds an object of the snapshot that is not what was granted")
		}
	}
	return nil
}

// discard removes what a failed run stored, best-effort: what it misses
// stays PENDING for the reaper.
func (r *snapshotRun) discard(ctx context.Context) {
	r.mu.Lock()
	keys := r.objects
	r.mu.Unlock()
	if len(keys) == 0 {
		return
	}
	for _, key := range keys {
		r.s.deleteObject(ctx, key, "object of a failed snapshot")
	}
	if err := r.s.snapshots.DropSnapshotObjects(context.WithoutCancel(ctx), keys); err != nil {
		r.s.log.Warn("forget the objects of a failed snapshot; the reaper takes them by age", "err", err)
	}
}
