package client

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/cairn-dev/cairn"
)

// Download writes the artifact's content to the file dest: through a
// presigned GET into dest+".part", verified against the artifact's size and
// sha256_b64, flushed to disk (fsync), then renamed to dest, so that dest
// never names bytes a crash could still lose. A failure, a mismatch or a
// cancelled context removes the part file and leaves dest as it was. An
// existing dest is refused (fs.ErrExist) unless o.Overwrite. An artifact
// recorded before digests were kept is verified by size alone.
//
// An artifact above o.RangedAbove is fetched in ranges, o.Parallel at
// once, and resumably: an interruption (or a failed range) keeps the part
// file and, beside it, dest+".part.json", which records the ranges done;
// the same Download run again fetches only the rest. The part file is
// flushed to disk every 64 MiB while the ranges arrive, so that the flush
// before the rename is short. The whole file is
// still verified before the rename: it is hashed in order as its prefix
// completes. A part file of another artifact, or of this one before its
// content changed, starts over (o.Notice hears it); a mismatch removes
// both files.
func (c *Client) Download(ctx context.Context, artifactID, dest string, o DownloadOptions) (*cairn.Artifact, error) {
	if fi, err := os.Stat(dest); err == nil {
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory", dest)
		}
		if !o.Overwrite {
			return nil, fmt.Errorf("%s: %w (overwrite it explicitly)", dest, fs.ErrExist)
		}
	}
	d, err := c.GetArtifact(ctx, artifactID, cairn.ArtifactGet{Presign: true, TTL: o.TTL})
	if err != nil {
		return nil, err
	}
	part := dest + ".part"
	if o.ranged(d.Artifact.Size) {
		return c.downloadRanged(ctx, d, part, dest, o)
	}
	_ = os.Remove(rangesFile(part)) // a ranged run's leftover; the part file is truncated below
	f, err := o.openPart(part)
	if err != nil {
		return nil, err
	}
	a, err := c.stream(ctx, d, f, o)
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

// DiscardDownload removes what an interrupted Download to dest keeps for
// the next run to resume: the part file dest+".part" and, beside it, a
// ranged download's ranges file. Either may be absent; dest itself is
// never touched. Call it once no Download to dest runs.
func DiscardDownload(dest string) error {
	part := dest + ".part"
	var errs []error
	for _, name := range []string{rangesFile(part), part} { // the ranges file first, as a failed run removes them
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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
	return c.stream(ctx, d, w, o)
}

// stream copies the content d's presigned GET serves to w, hashing it on
// the way, and verifies it.
func (c *Client) stream(ctx context.Context, d *cairn.ArtifactDetail, w io.Writer, o DownloadOptions) (*cairn.Artifact, error) {
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
