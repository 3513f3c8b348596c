package client

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/cairn-dev/cairn"
)

// UploadOptions shape Upload and Replace.
type UploadOptions struct {
	// Name is the new artifact's name (Upload only); empty derives it from
	// the file name with ArtifactName.
	Name string
	// Description of the new artifact (Upload only).
	Description *string
	// ContentType, when set, is signed into the PUT and sent with it. The
	// server sniffs the stored type from the bytes either way.
	ContentType string
	// Progress, optional, hears the bytes sent to the store only.
	Progress Progress
	// PhaseProgress, optional, hears the hash pass and the PUT, each
	// with its phase.
	PhaseProgress PhaseProgress
	RateLimit     int64 // bytes per second, all parts together; 0: unlimited

	// MultipartAbove is the file size above which the file goes up in
	// parts, resumably; 0 is DefaultMultipartAbove, negative never.
	MultipartAbove int64
	// Parallel is how many parts move at once; 0 is DefaultParallel.
	Parallel int
	// StateDir keeps the resume state of multipart uploads; "" is
	// DefaultStateDir().
	StateDir string
	// PartProgress, optional, hears the parts of a multipart upload.
	PartProgress PartProgress
	// Notice, optional, hears what became of an interrupted run of the
	// same upload: resumed, or started over and why. It is called on the
	// caller's goroutine before the bytes move.
	Notice func(Notice)
}

// multipart reports whether a file of size bytes goes up in parts.
func (o UploadOptions) multipart(size int64) bool {
	limit := cmp.Or(o.MultipartAbove, DefaultMultipartAbove)
	return limit >= 0 && size > limit
}

func (o UploadOptions) parallel() int { return max(cmp.Or(o.Parallel, DefaultParallel), 1) }

// DownloadOptions shape Download and DownloadTo.
type DownloadOptions struct {
	Overwrite     bool          // Download only: replace an existing destination file
	Progress      Progress      // optional
	PhaseProgress PhaseProgress // optional; always PhaseDownloading
	RateLimit     int64         // bytes per second, all ranges together; 0: unlimited
	// TTL is how long the presigned GET is valid (whole seconds, rounded
	// up); zero asks for the server's maximum.
	TTL time.Duration

	// RangedAbove is the size above which Download fetches ranges in
	// parallel into a part file that a later run resumes; 0 is
	// DefaultRangedAbove, negative never. DownloadTo always streams.
	RangedAbove int64
	// Parallel is how many ranges move at once; 0 is DefaultParallel.
	Parallel int
	// PartProgress, optional, hears the ranges of a ranged download.
	PartProgress PartProgress
	// Notice, optional, hears what became of an interrupted run of the
	// same download, before the bytes move.
	Notice func(Notice)

	// createPart opens the part file; nil is os.OpenFile (a test seam).
	createPart func(path string) (partFile, error)
	// rangeSize is a ranged download's range; 0 is rangeSize (a test seam).
	rangeSize int64
}

// ranged reports whether an object of size bytes is fetched in ranges.
func (o DownloadOptions) ranged(size int64) bool {
	limit := cmp.Or(o.RangedAbove, DefaultRangedAbove)
	return limit >= 0 && size > limit
}

func (o DownloadOptions) parallel() int { return max(cmp.Or(o.Parallel, DefaultParallel), 1) }

// partFile is what Download writes the bytes to before the rename.
type partFile interface {
	io.Writer
	Sync() error
	Close() error
}

// ErrVerification is wrapped by the error of a download whose bytes are
// not the artifact's: another size or another SHA-256 than recorded.
var ErrVerification = errors.New("the downloaded bytes are not the artifact's")

// hashBuffer is the read size of the hash pass. SHA-256 runs as fast on
// 256 KiB reads as on larger ones, and a transfer hashes up to Parallel
// parts at once: each buffer is live memory the CLI's 64 MiB budget pays.
const hashBuffer = 256 << 10

// Upload stores the file at path as a new artifact of the workspace: it
// checks the name is free, hashes the file, mints a staging slot bound to
// its size and SHA-256, PUTs the bytes with exactly the signed headers,
// then registers the artifact, whose sha256_b64 is that digest. The file
// is read twice (hash, then upload) with memory independent of its size;
// if it changes in between, the store refuses the PUT (source_changed).
// From StreamAbove, where the store hashes what it receives, it is read
// once instead: sent to a URL bound to its size and hashed on the way out,
// the register comparing that digest with the store's. A
// cancelled context stops it; the staging object an interrupted upload may
// leave is never referenced and the reaper removes it by age.
//
// A file above o.MultipartAbove goes up in parts instead, o.Parallel at
// once, each hashed and bound to its own SHA-256; the server hashes the
// assembled object at register. Such an upload resumes: its state is kept
// in o.StateDir until it is registered, and the same Upload (workspace,
// file, name) run again after an interruption sends only the parts the
// store lacks. A file that changed since (size, modification time, inode)
// starts over, and so does an upload the server no longer has; o.Notice
// hears which.
func (c *Client) Upload(ctx context.Context, workspaceID, path string, o UploadOptions) (*cairn.Artifact, error) {
	name := o.Name
	if name == "" {
		name = ArtifactName(path)
	}
	if err := cairn.ValidateName("artifact", name); err != nil {
		return nil, err
	}
	if err := cairn.ValidateDescription(o.Description); err != nil {
		return nil, err
	}
	src, err := openSource(path)
	if err != nil {
		return nil, err
	}
	defer src.close()
	t := uploadTarget{workspaceID: workspaceID, name: name, description: o.Description}
	if o.multipart(src.size) || c.interrupted(t, src, o) {
		return c.uploadInParts(ctx, t, src, o)
	}
	if _, err := c.checkTarget(ctx, t, nil); err != nil {
		return nil, err
	}
	staged, err := c.stageFile(ctx, workspaceID, src, o)
	if err != nil {
		return nil, err
	}
	return c.RegisterArtifact(ctx, workspaceID, cairn.ArtifactCreate{StagingKey: staged.Key, SHA256B64: staged.SHA256B64,
		Name: name, Description: o.Description})
}

// Replace uploads the file at path as the artifact's new content, as
// Upload does (in parts and resumably above o.MultipartAbove), then
// replaces the content (repairing a MISSING_OBJECT artifact). Name and
// Description of o are ignored.
func (c *Client) Replace(ctx context.Context, artifactID, path string, o UploadOptions) (*cairn.Artifact, error) {
	d, err := c.GetArtifact(ctx, artifactID, cairn.ArtifactGet{})
	if err != nil {
		return nil, err
	}
	src, err := openSource(path)
	if err != nil {
		return nil, err
	}
	defer src.close()
	t := uploadTarget{workspaceID: d.Artifact.WorkspaceID, current: d.Artifact}
	if o.multipart(src.size) || c.interrupted(t, src, o) {
		return c.uploadInParts(ctx, t, src, o)
	}
	staged, err := c.stageFile(ctx, d.Artifact.WorkspaceID, src, o)
	if err != nil {
		return nil, err
	}
	return c.ReplaceContent(ctx, artifactID, staged)
}

// nameTakenBy is the artifact of the workspace named name in any state,
// or nil (the server checks again at register).
func (c *Client) nameTakenBy(ctx context.Context, workspaceID, name string) (*cairn.Artifact, error) {
	taken, err := c.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: workspaceID, Names: []string{name},
		States: []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}, Page: cairn.Page{Limit: 1}})
	if err != nil || len(taken) == 0 {
		return nil, err
	}
	return taken[0], nil
}

func nameTaken(workspaceID, name string) error {
	return &cairn.Error{Reason: cairn.ReasonNameTaken, Status: http.StatusConflict,
		Detail: fmt.Sprintf("workspace %s already has an artifact named '%s'", workspaceID, name)}
}

// StreamAbove is the file size from which a single-PUT upload streams the
// file in one read, where the store hashes what it receives, instead of
// hashing it first: below it the second read costs less than the request
// that asks whether the store can.
const StreamAbove = 8 << 20

// stageFile uploads the file to a new staging slot and returns what a
// register takes: streamed where the store hashes the bytes it receives,
// else hashed first and bound to its SHA-256.
func (c *Client) stageFile(ctx context.Context, workspaceID string, src *source, o UploadOptions) (cairn.Staged, error) {
	if src.size >= StreamAbove && !c.hashFirst.Load() {
		staged, err := c.streamFile(ctx, workspaceID, src, o)
		if cairn.ErrorReason(err) != cairn.ReasonDigestRequired {
			return staged, err
		}
		c.hashFirst.Store(true)
	}
	key, err := c.hashThenSend(ctx, workspaceID, src, o)
	return cairn.Staged{Key: key}, err
}

// streamFile sends the file in one read to a URL that binds its size and
// has the store hash it; the client hashes the same bytes as they leave,
// for the register to compare with the store's. A file that changed while
// it was read is refused before any register (source_changed).
func (c *Client) streamFile(ctx context.Context, workspaceID string, src *source, o UploadOptions) (cairn.Staged, error) {
	st, err := c.MintStaging(ctx, workspaceID, cairn.StagingRequest{Size: src.size, ContentType: o.ContentType, Stream: true})
	if err != nil {
		return cairn.Staged{}, err
	}
	h := sha256.New()
	begin(o.PhaseProgress, PhaseUploading, src.size)
	m := newMeter(ctx, io.TeeReader(io.LimitReader(src.f, src.size), h), src.size,
		reporter(PhaseUploading, o.Progress, o.PhaseProgress), o.RateLimit)
	if err := c.put(ctx, st.PutURL, m, src.size, "", o.ContentType); err != nil {
		return cairn.Staged{}, err
	}
	m.finish()
	if err := src.unchanged(); err != nil {
		return cairn.Staged{}, err
	}
	return cairn.Staged{Key: st.Key, SHA256B64: base64.StdEncoding.EncodeToString(h.Sum(nil))}, nil
}

// hashThenSend hashes the file, mints a slot bound to its SHA-256 and
// uploads it; it returns the staging key. The store refuses the PUT if the
// file changed between the two reads.
func (c *Client) hashThenSend(ctx context.Context, workspaceID string, src *source, o UploadOptions) (string, error) {
	f, size := src.f, src.size
	begin(o.PhaseProgress, PhaseHashing, size)
	sum, err := hashFile(ctx, f, size, reporter(PhaseHashing, nil, o.PhaseProgress))
	if err != nil {
		return "", err
	}
	st, err := c.MintStaging(ctx, workspaceID, cairn.StagingRequest{Size: size, SHA256B64: sum, ContentType: o.ContentType})
	if err != nil {
		return "", err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", fmt.Errorf("rewind %s: %w", src.path, err)
	}
	begin(o.PhaseProgress, PhaseUploading, size)
	m := newMeter(ctx, io.LimitReader(f, size), size, reporter(PhaseUploading, o.Progress, o.PhaseProgress), o.RateLimit)
	if err := c.put(ctx, st.PutURL, m, size, sum, o.ContentType); err != nil {
		return "", err
	}
	m.finish()
	return st.Key, nil
}

// openRegular opens a regular file for reading.
func openRegular(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, fi, nil
}

// hashFile is the standard padded base64 of the SHA-256 of what r holds
// (size bytes), with progress in bytes read.
func hashFile(ctx context.Context, r io.Reader, size int64, progress Progress) (string, error) {
	h := sha256.New()
	m := newMeter(ctx, r, size, progress, 0)
	if _, err := io.CopyBuffer(h, m, make([]byte, hashBuffer)); err != nil {
		return "", fmt.Errorf("hash the file: %w", err)
	}
	m.finish()
	return base64.StdEncoding.EncodeToString(h.Sum(nil)), nil
}

// begin reports the start of a phase.
func begin(pp PhaseProgress, phase Phase, total int64) {
	if pp != nil {
		pp(phase, 0, total)
	}
}

// put sends body to a presigned PUT with exactly the headers it was signed
// for: Content-Length, x-amz-checksum-sha256 and, only when signed,
// Content-Type. An empty body is a literal Content-Length: 0.
func (c *Client) put(ctx context.Context, putURL string, body io.Reader, size int64, sum, contentType string) error {
	if size == 0 {
		body = http.NoBody
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, putURL, body)
	if err != nil {
		return errors.New("the staging PUT URL is malformed")
	}
	req.ContentLength = size
	if sum != "" {
		req.Header.Set("x-amz-checksum-sha256", sum)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return storeTransportError(ctx, "upload to", putURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return storeRefusal("upload", resp)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBytes)) // so the connection is reused
	return nil
}

// ReadHead returns at most the first n bytes of the artifact's content,
// through a ranged presigned GET, and its total size. It verifies nothing:
// a preview is not a download.
func (c *Client) ReadHead(ctx context.Context, artifactID string, n int64) ([]byte, int64, error) {
	d, err := c.GetArtifact(ctx, artifactID, cairn.ArtifactGet{Presign: true})
	if err != nil {
		return nil, 0, err
	}
	total := d.Artifact.Size
	want := min(max(n, 0), total)
	if want == 0 {
		// Stores refuse a range over an empty object.
		return []byte{}, total, nil
	}
	resp, err := c.fetch(ctx, d.GetURL, "bytes=0-"+strconv.FormatInt(want-1, 10))
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	head, err := io.ReadAll(io.LimitReader(resp.Body, want))
	if err != nil {
		return nil, 0, fmt.Errorf("read artifact %s: %w", artifactID, redactURL(err))
	}
	return head, total, nil
}

// fetch sends a GET to a presigned URL (with a Range, when given) and
// returns a 200 or 206 answer, whose body the caller closes.
func (c *Client) fetch(ctx context.Context, getURL, rangeHeader string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, getURL, nil)
	if err != nil {
		return nil, errors.New("the presigned GET URL is malformed")
	}
	if rangeHeader != "" {
		req.Header.Set("Range", rangeHeader)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, storeTransportError(ctx, "download from", getURL, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		defer resp.Body.Close()
		return nil, storeRefusal("download", resp)
	}
	return resp, nil
}

// ArtifactName derives an artifact name from a file path: its base name
// with every character the name rule refuses replaced by '_', at most 128
// characters ("report.tar.gz" → "report_tar_gz"); "" when nothing is left.
func ArtifactName(path string) string {
	base := filepath.Base(path)
	if base == "." || base == "/" || base == string(filepath.Separator) {
		return ""
	}
	out := []byte(base)
	for i, b := range out {
		if !nameByte(b) {
			out[i] = '_'
		}
	}
	return string(out[:min(len(out), cairn.MaxNameLength)])
}

// nameByte reports a byte the name rule allows.
func nameByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_'
}
