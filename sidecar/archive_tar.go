package sidecar

import (
	"archive/tar"
	"bufio"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"
)

// unpackTarGz unpacks a tar.gz in one streaming pass, with no second
// decompression: a second pass would halve the throughput the product
// asks of unpack (≥ 0.9× `curl | tar xzf -`). Each header is judged before
// its entry is written, and only into the staging directory; what needs
// the whole archive — a symlink through a symlink that comes later, the
// final ratio, the digest of the compressed bytes, hashed as they stream —
// is judged after the last entry and before the rename. So a refused entry
// is always found before the rename, and nothing of a refused archive
// reaches the target.
func (u *unpacker) unpackTarGz(src *archiveStream) *failure {
	u.b.packed = src.n.Load
	ra := newReadAhead(src)
	defer ra.close()
	u.stopReading = ra.close
	// klauspost's inflater has a loop made for a *bufio.Reader; any other
	// byte reader it reads a byte at a time through an interface, 10-15%
	// slower.
	in := bufio.NewReaderSize(ra, inflateBuffer)
	gz, err := gzip.NewReader(in)
	if err != nil {
		return u.readFailure(src, err)
	}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) { // insecure names are judged below
			return u.readFailure(src, err)
		}
		if hdr.Typeflag == tar.TypeXGlobalHeader {
			continue // PAX defaults for what follows, not an entry
		}
		if f := u.tarEntry(hdr, tr, src); f != nil {
			return f
		}
	}
	if f := u.drain(gz, in, src); f != nil {
		return f
	}
	ra.close()
	return u.complete(src.n.Load(), src.digest())
}

// inflateBuffer is the size of the buffer between the read-ahead and the
// inflater.
const inflateBuffer = 64 << 10

// drain reads what follows the tar's end: its padding, then the rest of
// the compressed stream, so the gzip CRC is checked and the digest covers
// every byte.
func (u *unpacker) drain(gz, rest io.Reader, src *archiveStream) *failure {
	const mostPadding = 1 << 20
	n, err := io.Copy(io.Discard, io.LimitReader(gz, mostPadding+1))
	switch {
	case err != nil:
		return u.readFailure(src, err)
	case n > mostPadding:
		return fail(ReasonArchiveInvalid, "the archive holds more than %d bytes after the tar's end", mostPadding)
	}
	if _, err := io.Copy(io.Discard, rest); err != nil {
		return u.readFailure(src, err)
	}
	return nil
}

func (u *unpacker) tarEntry(hdr *tar.Header, tr io.Reader, src *archiveStream) *failure {
	if f := u.b.entry(); f != nil {
		return f
	}
	k, f := tarKind(hdr)
	if f != nil {
		return f
	}
	name, f := cleanName(hdr.Name, k == kindDir)
	if f != nil {
		return f
	}
	meta := entryMeta{perm: uint32(hdr.Mode) & keptModeBits, uid: hdr.Uid, gid: hdr.Gid, owned: true, mtime: hdr.ModTime}
	if name == "." && k != kindDir {
		return notRootDir(hdr.Name)
	}
	switch k {
	case kindDir:
		return u.dir(hdr.Name, name, meta)
	case kindSymlink:
		return u.symlink(hdr.Name, name, hdr.Linkname, meta)
	case kindHardlink:
		return u.hardlink(hdr.Name, name, hdr.Linkname)
	}
	f, readErr := u.file(hdr.Name, name, meta, hdr.Size, tr)
	if readErr != nil {
		return u.readFailure(src, readErr)
	}
	return f
}

// tarKind tells what a header makes; anything but a directory, a regular
// file, a symlink or a hard link is refused.
func tarKind(hdr *tar.Header) (entryKind, *failure) {
	switch hdr.Typeflag {
	case tar.TypeDir:
		return kindDir, nil
	case tar.TypeReg:
		return kindFile, nil
	case tar.TypeSymlink:
		return kindSymlink, nil
	case tar.TypeLink:
		return kindHardlink, nil
	}
	return 0, unsafePath(hdr.Name, fmt.Sprintf("it is a %s, which unpack does not create", tarTypeName(hdr.Typeflag)))
}

func tarTypeName(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "named pipe (FIFO)"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}

// readFailure judges an error reading the archive: a bound it crossed, the
// store breaking off, or a corrupt or unsupported archive. It stops the
// read-ahead first, so what the stream recorded is settled.
func (u *unpacker) readFailure(src *archiveStream, err error) *failure {
	u.stopReading()
	var f *failure
	switch {
	case errors.As(err, &f):
		return f
	case src.over:
		return fail(ReasonArchiveTooLarge, "the archive is larger than the %d byte cap", u.b.lim.size)
	case src.err != nil:
		return brokeOff(src.err)
	}
	return fail(ReasonArchiveInvalid, "the archive is not a valid %s: %v", u.format, err)
}

// archiveStream is the archive as the GET streams it: counted against the
// size cap, hashed when a digest is to be checked, with the store's
// failure kept apart from the archive's. It is read on the read-ahead's
// goroutine; n is read on the unpack's too (the ratio), the rest only
// once the read-ahead stopped.
type archiveStream struct {
	r     io.Reader
	n     atomic.Int64
	limit int64
	sum   *inOrder
	over  bool
	err   error
}

var errOverCap = errors.New("archive over its size cap")

func (s *archiveStream) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.sum.observe(s.n.Load(), p[:n])
	if s.n.Add(int64(n)) > s.limit {
		s.over = true
		return n, errOverCap
	}
	if err != nil && !errors.Is(err, io.EOF) {
		s.err = err
	}
	return n, err
}

func (s *archiveStream) digest() []byte { return s.sum.digest() }
