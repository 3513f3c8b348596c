package client

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// Progress, optional, hears the PUT's bytes only.
	Progress Progress
	// PhaseProgress, optional, hears the hash pass and the PUT, each
	// with its phase.
	PhaseProgress PhaseProgress
	RateLimit     int64 // bytes per second; 0: unlimited
}

// DownloadOptions shape Download and DownloadTo.
type DownloadOptions struct {
	Overwrite     bool          // Download only: replace an existing destination file
	Progress      Progress      // optional
	PhaseProgress PhaseProgress // optional; always PhaseDownloading
	RateLimit     int64         // bytes per second; 0: unlimited
	// TTL is how long the presigned GET is valid (whole seconds, rounded
	// up); zero asks for the server's maximum.
	TTL time.Duration

	// createPart opens the part file; nil is os.OpenFile (a test seam).
	createPart func(path string) (partFile, error)
}

// partFile is what Download writes the bytes to before the rename.
type partFile interface {
	io.Writer
	Sync() error
	Close() error
}

// ErrVerification is wrapped by the error of a download whose bytes are
// not the artifact's: another size or another SHA-256 than recorded.
var ErrVerification = errors.New("the downloaded bytes are not the artifact's")

// hashBuffer is the read size of the hash pass.
const hashBuffer = 1 << 20

// Upload stores the file at path as a new artifact of the workspace: it
// checks the name is free, hashes the file, mints a staging slot bound to
// its size and SHA-256, PUTs the bytes with exactly the signed headers,
// then registers the artifact, whose sha256_b64 is that digest. The file
// is read twice (hash, then upload) with memory independent of its size;
// if it changes in between, the store refuses the PUT (source_changed). A
// cancelled context stops it; the staging object an interrupted upload may
// leave is never referenced and the reaper removes it by age.
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
	if err := c.checkNameFree(ctx, workspaceID, name); err != nil {
		return nil, err
	}
	key, err := c.stageFile(ctx, workspaceID, path, o)
	if err != nil {
		return nil, err
	}
	return c.RegisterArtifact(ctx, workspaceID, cairn.ArtifactCreate{StagingKey: key, Name: name, Description: o.Description})
}

// Replace uploads the file at path as the artifact's new content, as
// Upload does, then replaces the content (repairing a MISSING_OBJECT
// artifact). Name and Description of o are ignored.
func (c *Client) Replace(ctx context.Context, artifactID, path string, o UploadOptions) (*cairn.Artifact, error) {
	d, err := c.GetArtifact(ctx, artifactID, cairn.ArtifactGet{})
	if err != nil {
		return nil, err
	}
	key, err := c.stageFile(ctx, d.Artifact.WorkspaceID, path, o)
	if err != nil {
		return nil, err
	}
	return c.ReplaceContent(ctx, artifactID, cairn.Staged{Key: key})
}

// checkNameFree refuses, before any byte is read, a name the workspace
// already has in any state (the server checks again at register).
func (c *Client) checkNameFree(ctx context.Context, workspaceID, name string) error {
	taken, err := c.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: workspaceID, Names: []string{name},
		States: []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}, Page: cairn.Page{Limit: 1}})
	if err != nil {
		return err
	}
	if len(taken) > 0 {
		return &cairn.Error{Reason: cairn.ReasonNameTaken, Status: http.StatusConflict,
			Detail: fmt.Sprintf("workspace %s already has an artifact named '%s'", workspaceID, name)}
	}
	return nil
}

// stageFile hashes the file, mints a slot for it and uploads it; it
// returns the staging key.
func (c *Client) stageFile(ctx context.Context, workspaceID, path string, o UploadOptions) (string, error) {
	f, size, err := openRegular(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
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
		return "", fmt.Errorf("rewind %s: %w", path, err)
	}
	begin(o.PhaseProgress, PhaseUploading, size)
	m := newMeter(ctx, io.LimitReader(f, size), size, reporter(PhaseUploading, o.Progress, o.PhaseProgress), o.RateLimit)
	if err := c.put(ctx, st.PutURL, m, size, sum, o.ContentType); err != nil {
		return "", err
	}
	m.finish()
	return st.Key, nil
}

// openRegular opens a regular file for reading and returns its size.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", path)
	}
	return f, fi.Size(), nil
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
	req.Header.Set("x-amz-checksum-sha256", sum)
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

// Download writes the artifact's content to the file dest: through a
// presigned GET into dest+".part", verified against the artifact's size and
// sha256_b64, flushed to disk (fsync), then renamed to dest, so that dest
// never names bytes a crash could still lose. A failure, a mismatch or a cancelled
// context removes the part file and leaves dest as it was. An existing
// dest is refused (fs.ErrExist) unless o.Overwrite. An artifact recorded
// before digests were kept is verified by size alone.
func (c *Client) Download(ctx context.Context, artifactID, dest string, o DownloadOptions) (*cairn.Artifact, error) {
	if fi, err := os.Stat(dest); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory", dest)
		}
		if !o.Overwrite {
			return nil, fmt.Errorf("%s: %w (overwrite it explicitly)", dest, fs.ErrExist)
		}
	}
	part := dest + ".part"
	f, err := o.openPart(part)
	if err != nil {
		return nil, err
	}
	a, err := c.DownloadTo(ctx, artifactID, f, o)
	if err == nil {
		err = closePart(f, part)
	} else {
		_ = f.Close() // the download's error is the one to report
	}
	if err == nil {
		err = place(part, dest, o.Overwrite)
	}
	if err != nil {
		_ = os.Remove(part) // the part file must not outlive a failure; it may already be gone
		return nil, err
	}
	return a, nil
}

// closePart flushes the part file to disk, then closes it: the rename
// that follows must not publish bytes still only in the page cache.
func closePart(f partFile, part string) error {
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("flush %s: %w", part, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", part, err)
	}
	return nil
}

// openPart creates (or truncates) the part file.
func (o DownloadOptions) openPart(path string) (partFile, error) {
	if o.createPart != nil {
		return o.createPart(path)
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
}

// place moves the finished part file to dest. Without overwrite a hard
// link makes the move fail if dest appeared meanwhile; where links are not
// supported, a rename does.
func place(part, dest string, overwrite bool) error {
	if !overwrite {
		err := os.Link(part, dest)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w (overwrite it explicitly)", dest, fs.ErrExist)
		}
		if err == nil {
			return os.Remove(part)
		}
	}
	return os.Rename(part, dest)
}

// DownloadTo streams the artifact's content to w through a presigned GET
// and verifies its size and SHA-256 at the end; on a mismatch the bytes
// were written already, and the error wraps ErrVerification.
func (c *Client) DownloadTo(ctx context.Context, artifactID string, w io.Writer, o DownloadOptions) (*cairn.Artifact, error) {
	d, err := c.GetArtifact(ctx, artifactID, cairn.ArtifactGet{Presign: true, TTL: o.TTL})
	if err != nil {
		return nil, err
	}
	a := d.Artifact
	resp, err := c.fetch(ctx, d.GetURL, "")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.ContentLength >= 0 && resp.ContentLength != a.Size {
		return nil, fmt.Errorf("artifact %s: the store holds %d bytes, %d were recorded: %w",
			a.ID, resp.ContentLength, a.Size, ErrVerification)
	}
	begin(o.PhaseProgress, PhaseDownloading, a.Size)
	m := newMeter(ctx, io.LimitReader(resp.Body, a.Size+1), a.Size, reporter(PhaseDownloading, o.Progress, o.PhaseProgress), o.RateLimit)
	toHash, sum := hashBehind()
	n, err := io.CopyBuffer(io.MultiWriter(w, toHash), m, make([]byte, ioBufferBytes))
	toHash.Close()
	digest := <-sum
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("download artifact %s: %w", a.ID, context.Cause(ctx))
		}
		return nil, fmt.Errorf("download artifact %s: %w", a.ID, redactURL(err))
	}
	if err := verify(a, n, digest); err != nil {
		return nil, err
	}
	m.finish()
	return a, nil
}

// hashBehind hashes what is written to the returned writer on a second
// goroutine, one buffer behind the writer, so that a download runs at the
// pace of the slower of network and hash rather than of both in turn.
// Closing the writer ends the goroutine, which then sends the digest.
func hashBehind() (io.WriteCloser, <-chan string) {
	pr, pw := io.Pipe()
	sum := make(chan string, 1)
	go func() {
		h := sha256.New()
		_, _ = io.CopyBuffer(h, pr, make([]byte, ioBufferBytes)) // a hash never fails; the writer's close ends the copy
		sum <- base64.StdEncoding.EncodeToString(h.Sum(nil))
	}()
	return pw, sum
}

func verify(a *cairn.Artifact, n int64, sum string) error {
	if n != a.Size {
		return fmt.Errorf("artifact %s: received %d bytes, %d were recorded: %w", a.ID, n, a.Size, ErrVerification)
	}
	if a.SHA256B64 != nil && *a.SHA256B64 != sum {
		return fmt.Errorf("artifact %s: the bytes have SHA-256 %s, %s was recorded: %w", a.ID, sum, *a.SHA256B64, ErrVerification)
	}
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
