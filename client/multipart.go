package client

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// Defaults of the transfers of large files.
const (
	// DefaultParallel is how many parts of one transfer move at once.
	DefaultParallel = 4
	// DefaultMultipartAbove is the file size above which Upload and
	// Replace send the file in parts, resumably. Measured on versitygw
	// (docs/cli.md, "Large files and resume"): a store that assembles parts by
	// copying them, plus the server's hash of the result, makes a multipart
	// upload about twice as long as one PUT of the same bytes, so below
	// 1 GiB — where starting over costs seconds — one PUT wins.
	DefaultMultipartAbove = 1 << 30
)

// partAttempts is how many times one part is sent before the upload
// fails: a dropped connection or an expired URL costs one part, not the
// upload.
const partAttempts = 3

// source is the file an upload reads, opened once.
type source struct {
	f    *os.File
	path string // absolute
	size int64
	fp   fingerprint
}

// openSource opens a regular file for an upload.
func openSource(path string) (*source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	f, fi, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	return &source{f: f, path: abs, size: fi.Size(), fp: fingerprintOf(fi)}, nil
}

// unchanged refuses a file whose size or modification time changed since
// it was opened: what was read of it may mix two versions.
func (s *source) unchanged() error {
	fi, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("stat %s: %w", s.path, err)
	}
	if fingerprintOf(fi) != s.fp {
		return &cairn.Error{Reason: cairn.ReasonSourceChanged,
			Detail: fmt.Sprintf("%s changed while it was uploaded; upload it again", s.path)}
	}
	return nil
}

// close closes the file, which was only read: nothing can be lost.
func (s *source) close() { _ = s.f.Close() }

// uploadTarget is what uploaded content becomes: a new artifact of the
// workspace, or the content of an existing artifact (current).
type uploadTarget struct {
	workspaceID string
	name        string
	description *string
	current     *cairn.Artifact // a replace's artifact
}

// key names the target in the resume state's file name.
func (t uploadTarget) key() string {
	if t.current != nil {
		return "replace:" + t.current.ID
	}
	return "upload:" + t.name
}

func (t uploadTarget) register(ctx context.Context, c *Client, s cairn.Staged) (*cairn.Artifact, error) {
	if t.current != nil {
		return c.ReplaceContent(ctx, t.current.ID, s)
	}
	return c.RegisterArtifact(ctx, t.workspaceID,
		cairn.ArtifactCreate{StagingKey: s.Key, Upload: s.Upload, Name: t.name, Description: t.description})
}

// interrupted reports an earlier, unfinished multipart run of this
// transfer: it resumes in parts whatever the threshold says now.
func (c *Client) interrupted(t uploadTarget, src *source, o UploadOptions) bool {
	dir, err := resolveStateDir(o.StateDir)
	if err != nil {
		return false
	}
	_, err = os.Stat(stateFile(dir, c.base.String(), t.workspaceID, src.path, t.key()))
	return err == nil
}

// uploadInParts is Upload or Replace of a large file. It resumes the
// upload an earlier run of the same transfer left (its state file in the
// state directory, the store's list of received parts), or starts one,
// then sends the parts the store lacks, o.Parallel at once, registers the
// content and forgets the state. The server hashes the assembled object;
// each part was verified against its own SHA-256 by the store.
func (c *Client) uploadInParts(ctx context.Context, t uploadTarget, src *source, o UploadOptions) (*cairn.Artifact, error) {
	dir, err := resolveStateDir(o.StateDir)
	if err != nil {
		return nil, err
	}
	file := stateFile(dir, c.base.String(), t.workspaceID, src.path, t.key())
	st, err := readState(file)
	if err != nil {
		return nil, err
	}
	if a, err := c.checkTarget(ctx, t, st); a != nil || err != nil {
		return a, err
	}
	var stored []cairn.UploadedPart
	if st != nil {
		var a *cairn.Artifact
		if st, stored, a, err = c.resumeUpload(ctx, t, src, st, o); a != nil || err != nil {
			return a, err
		}
	}
	if st == nil {
		if st, err = c.startUpload(ctx, t, src, file, o); err != nil {
			return nil, err
		}
	}
	err = c.sendParts(ctx, st, src, stored, o)
	if errors.Is(err, errPartVersions) {
		notify(o.Notice, Notice{Kind: NoticeSourceChanged,
			Text: "a stored part differs from the file, and this store keeps every version of a part; starting over"})
		c.abandon(ctx, st)
		if st, err = c.startUpload(ctx, t, src, file, o); err != nil {
			return nil, err
		}
		err = c.sendParts(ctx, st, src, nil, o)
	}
	if err != nil {
		return nil, err
	}
	a, err := t.register(ctx, c, st.staged(src.size))
	if err != nil {
		if cairn.ErrorReason(err) == cairn.ReasonStagingKeyUsed {
			st.remove() // registered under another name or artifact: nothing left to resume
		}
		return nil, err
	}
	st.remove()
	return a, nil
}

func (s *uploadState) staged(size int64) cairn.Staged {
	return cairn.Staged{Key: s.Key, Upload: &cairn.StagedUpload{ID: s.UploadID, Size: size}}
}

// checkTarget refuses, before any byte is read, a name the workspace has
// already — unless the artifact of that name (or the replaced artifact)
// holds the object of the interrupted upload st: then an earlier run
// registered it and lost only the answer, and that artifact is the result.
func (c *Client) checkTarget(ctx context.Context, t uploadTarget, st *uploadState) (*cairn.Artifact, error) {
	taken := t.current
	if t.current == nil {
		var err error
		if taken, err = c.nameTakenBy(ctx, t.workspaceID, t.name); err != nil {
			return nil, err
		}
	}
	switch {
	case st != nil && taken != nil && taken.ObjectKey == st.Key:
		st.remove()
		return taken, nil
	case t.current == nil && taken != nil:
		return nil, nameTaken(t.workspaceID, t.name)
	}
	return nil, nil
}

// resumeUpload decides what the state of an interrupted run allows: to
// go on with the parts the store holds, to register an upload the store
// completed already, or — the source changed, the upload is gone — to
// start over (a nil state), saying so.
func (c *Client) resumeUpload(ctx context.Context, t uploadTarget, src *source, st *uploadState,
	o UploadOptions) (*uploadState, []cairn.UploadedPart, *cairn.Artifact, error) {
	if st.Fingerprint != src.fp || !st.fits(src.size) {
		notify(o.Notice, Notice{Kind: NoticeSourceChanged, Text: "source changed since the interrupted upload; starting over"})
		c.abandon(ctx, st)
		return nil, nil, nil, nil
	}
	stored, err := c.UploadedParts(ctx, st.WorkspaceID, st.Key, st.UploadID)
	if cairn.ErrorReason(err) != cairn.ReasonStagingNotFound {
		return st, stored, nil, err
	}
	// The store has no such upload: a register that completed it may have
	// failed after, so it is tried once; else the upload expired or was
	// aborted.
	a, err := t.register(ctx, c, st.staged(src.size))
	if err == nil {
		st.remove()
		return nil, nil, a, nil
	}
	if cairn.ErrorReason(err) != cairn.ReasonStagingNotFound {
		return nil, nil, nil, err
	}
	notify(o.Notice, Notice{Kind: NoticeUploadGone,
		Text: "the interrupted upload expired or was aborted on the server; starting over"})
	st.remove()
	return nil, nil, nil, nil
}

// abandon aborts an upload that cannot be resumed and forgets it. An abort
// that fails leaves the parts to the maintainer, which removes unfinished
// uploads by age.
func (c *Client) abandon(ctx context.Context, st *uploadState) {
	_ = c.AbortUpload(ctx, st.WorkspaceID, st.Key, st.UploadID) // best effort, as said
	st.remove()
}

// startUpload mints a multipart upload for the file and saves its state
// before any part is sent, so that from then on an interruption resumes.
func (c *Client) startUpload(ctx context.Context, t uploadTarget, src *source, file string, o UploadOptions) (*uploadState, error) {
	sg, err := c.MintStaging(ctx, t.workspaceID, cairn.StagingRequest{Size: src.size, ContentType: o.ContentType, Multipart: true})
	if err != nil {
		return nil, err
	}
	if sg.Upload == nil {
		return nil, errors.New("the server answered a multipart upload request without an upload plan")
	}
	st := &uploadState{Version: stateVersion, Server: c.base.String(), WorkspaceID: t.workspaceID, Source: src.path,
		Name: t.name, Description: t.description, Key: sg.Key, UploadID: sg.Upload.ID, PartSize: sg.Upload.PartSize,
		PartCount: sg.Upload.PartCount, Fingerprint: src.fp, StartedAt: time.Now().UTC(), file: file}
	if t.current != nil {
		st.ArtifactID, st.Name, st.Description = t.current.ID, "", nil
	}
	if !st.fits(src.size) {
		c.abandon(ctx, st)
		return nil, fmt.Errorf("the server's plan (%d parts of %d bytes) does not fit a file of %d bytes",
			st.PartCount, st.PartSize, src.size)
	}
	if err := st.save(); err != nil {
		c.abandon(ctx, st)
		return nil, err
	}
	return st, nil
}

// sendParts sends every part the store does not hold, or holds with other
// bytes than the file's, o.Parallel at once, with progress over the whole
// file.
func (c *Client) sendParts(ctx context.Context, st *uploadState, src *source, stored []cairn.UploadedPart, o UploadOptions) error {
	kept, keptBytes, need, err := c.checkStored(ctx, st, src, stored, o)
	if err != nil {
		return err
	}
	if len(stored) > 0 {
		notify(o.Notice, resumedNotice("stored", kept, st.PartCount))
	}
	fl := newFlow(ctx, keptBytes, src.size, kept, st.PartCount, flowOptions{
		progress: reporter(PhaseUploading, o.Progress, o.PhaseProgress), parts: o.PartProgress, rate: o.RateLimit})
	if o.PhaseProgress != nil {
		o.PhaseProgress(PhaseUploading, keptBytes, src.size)
	}
	m := &partMinter{c: c, st: st, reqs: make(chan mintRequest)}
	mctx, stop := context.WithCancel(ctx)
	minted := make(chan struct{})
	go func() {
		defer close(minted)
		m.run(mctx)
	}()
	err = eachParallel(ctx, o.parallel(), need, func(ctx context.Context, n int) error {
		return c.sendPart(ctx, m, fl, st, src, n)
	})
	stop()
	<-minted
	if err != nil {
		return err
	}
	fl.finish()
	return nil
}

// errPartVersions: a stored part holds other bytes than the file's, on a
// store that lists parts without their checksums — SeaweedFS, which also
// keeps every version of a part sent twice and lists them all, so the
// part cannot be replaced in place: the upload starts over.
var errPartVersions = errors.New("a stored part differs on a store that keeps every version of a part")

// checkStored hashes the parts the store holds, from the file, o.Parallel
// at once (PhaseHashing over their bytes): a part whose SHA-256 is the
// store's is kept, any other is sent again (errPartVersions where the store
// lists no checksums). need lists the parts to send, in order.
func (c *Client) checkStored(ctx context.Context, st *uploadState, src *source, stored []cairn.UploadedPart,
	o UploadOptions) (kept int, keptBytes int64, need []int, err error) {
	have := make(map[int]cairn.UploadedPart, len(stored))
	for _, p := range stored {
		have[p.Number] = p
	}
	var check []cairn.UploadedPart
	var checkBytes int64
	for n := 1; n <= st.PartCount; n++ {
		p, ok := have[n]
		if _, size := st.part(n, src.size); ok && p.Size == size {
			check = append(check, p)
			checkBytes += size
			continue
		}
		need = append(need, n)
	}
	if len(check) == 0 {
		return 0, 0, need, nil
	}
	if o.PhaseProgress != nil {
		o.PhaseProgress(PhaseHashing, 0, checkBytes)
	}
	fl := newFlow(ctx, 0, checkBytes, 0, 0, flowOptions{progress: reporter(PhaseHashing, nil, o.PhaseProgress)})
	same := make([]bool, len(check))
	err = eachParallel(ctx, o.parallel(), indices(len(check)), func(ctx context.Context, i int) error {
		off, size := st.part(check[i].Number, src.size)
		same[i], err = holdsPart(ctx, fl.reader(io.NewSectionReader(src.f, off, size)), size, check[i])
		return err
	})
	if err != nil {
		return 0, 0, nil, err
	}
	fl.finish()
	for i, p := range check {
		if !same[i] && p.SHA256B64 == "" {
			return 0, 0, nil, errPartVersions
		}
		if !same[i] {
			need = append(need, p.Number)
			continue
		}
		kept++
		keptBytes += p.Size
	}
	slices.Sort(need)
	return kept, keptBytes, need, nil
}

// holdsPart reports whether the stored part p holds the bytes of r: by
// the SHA-256 the store verified it against, or — on a store that lists
// parts without it — by its ETag when that is an MD5 (the store verified
// the part's SHA-256 at upload; equal MD5s mean these are those bytes).
// A part it cannot tell is sent again.
func holdsPart(ctx context.Context, r io.Reader, size int64, p cairn.UploadedPart) (bool, error) {
	sha, md := sha256.New(), md5.New()
	w := io.Writer(sha)
	byMD5 := p.SHA256B64 == "" && isMD5(p.ETag)
	if byMD5 {
		w = md
	}
	m := newMeter(ctx, r, size, nil, 0)
	if _, err := io.CopyBuffer(w, m, make([]byte, hashBuffer)); err != nil {
		return false, fmt.Errorf("hash the file: %w", err)
	}
	m.finish()
	if byMD5 {
		return hex.EncodeToString(md.Sum(nil)) == strings.ToLower(p.ETag), nil
	}
	return p.SHA256B64 != "" && base64.StdEncoding.EncodeToString(sha.Sum(nil)) == p.SHA256B64, nil
}

// isMD5 reports whether an ETag is a bare MD5 in hex: a multipart
// object's ("…-N") or an encrypted one's is not.
func isMD5(etag string) bool {
	if len(etag) != 2*md5.Size {
		return false
	}
	_, err := hex.DecodeString(etag)
	return err == nil
}

// sendPart hashes part n, gets its URL, bound to that digest, and PUTs
// it straight from the file. A failure the next attempt may not see (a
// dropped connection, an expired URL, a store's 5xx) is tried again with
// a fresh URL, up to partAttempts times; a refused body (the file changed
// under the upload) is not.
func (c *Client) sendPart(ctx context.Context, m *partMinter, fl *flow, st *uploadState, src *source, n int) error {
	off, size := st.part(n, src.size)
	sum, err := hashFile(ctx, io.NewSectionReader(src.f, off, size), size, nil)
	if err != nil {
		return fmt.Errorf("part %d: %w", n, err)
	}
	wait := termkit.Retry()
	for attempt := 1; ; attempt++ {
		url, err := m.url(ctx, cairn.PartSpec{Number: n, Size: size, SHA256B64: sum})
		if err != nil {
			return err
		}
		body := fl.reader(io.NewSectionReader(src.f, off, size))
		err = c.put(ctx, url, body, size, sum, "")
		if err == nil {
			fl.partDone()
			return nil
		}
		body.undo()
		if attempt == partAttempts || !partRetryable(ctx, err) {
			return fmt.Errorf("upload part %d of %d: %w", n, st.PartCount, err)
		}
		if err := sleep(ctx, wait.NextBackOff()); err != nil {
			return err
		}
	}
}

// partRetryable reports a failed part PUT that another attempt may get
// through: no answer at all, or a store that answered with a failure not
// about the bytes.
func partRetryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	return IsUnreachable(err) || cairn.ErrorReason(err) == cairn.ReasonStoreUnavailable
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

func indices(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
