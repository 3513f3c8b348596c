package sidecar

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sort"
	"sync"

	"github.com/klauspost/compress/flate"
)

// zipEntry is one entry of a zip, judged and ready to write.
type zipEntry struct {
	f      *zip.File
	name   string
	kind   entryKind
	meta   entryMeta
	target string // symlink
}

// unpackZip unpacks a zip read through r. Unlike a tar.gz, a zip says
// everything about itself up front, in its central directory: every entry
// (names, types, declared sizes against the limits and the ratio,
// duplicates, parents, link targets) is judged before anything is written.
// The extraction then enforces the real decompressed sizes too, since the
// declared ones can lie.
func (u *unpacker) unpackZip(r *ranger) *failure {
	u.rng = r
	u.b.packed = func() int64 { return r.size }
	zr, err := zip.NewReader(r, r.size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) { // insecure names are judged below
		return u.zipFailure(err)
	}
	zr.RegisterDecompressor(zip.Deflate, newInflater)
	if len(zr.File) > u.b.lim.entries {
		return fail(ReasonArchiveTooLarge, "the archive holds %d entries, more than %d", len(zr.File), u.b.lim.entries)
	}
	plan, f := u.planZip(zr.File)
	if f != nil {
		return f
	}
	if f := u.writeZip(plan); f != nil {
		return f
	}
	sum, f := r.digest()
	if f != nil {
		return f
	}
	return u.complete(r.size, sum)
}

// planZip judges every entry, in the central directory's order.
func (u *unpacker) planZip(files []*zip.File) ([]zipEntry, *failure) {
	plan := make([]zipEntry, 0, len(files))
	for _, zf := range files {
		if f := u.b.entry(); f != nil {
			return nil, f
		}
		e, f := u.zipEntry(zf)
		if f != nil {
			return nil, f
		}
		plan = append(plan, e)
	}
	if f := u.t.checkLinks(); f != nil {
		return nil, f
	}
	return plan, u.b.ratioOK(u.b.declared)
}

func (u *unpacker) zipEntry(zf *zip.File) (zipEntry, *failure) {
	e := zipEntry{f: zf}
	switch {
	case zf.Flags&0x1 != 0:
		return e, fail(ReasonArchiveInvalid, "archive entry %s is encrypted, which unpack does not support", quoteName(zf.Name))
	case zf.Method != zip.Store && zf.Method != zip.Deflate:
		return e, fail(ReasonArchiveInvalid, "archive entry %s uses compression method %d, which unpack does not support", quoteName(zf.Name), zf.Method)
	}
	mode := zf.Mode()
	var f *failure
	if e.kind, f = zipKind(zf.Name, mode); f != nil {
		return e, f
	}
	if e.name, f = cleanName(zf.Name, e.kind == kindDir); f != nil {
		return e, f
	}
	e.meta = entryMeta{perm: uint32(mode.Perm()), mtime: zf.Modified}
	if mode&fs.ModeSticky != 0 {
		e.meta.perm |= 0o1000
	}
	e.meta.uid, e.meta.gid, e.meta.owned = zipOwner(zf.Extra)
	if e.name == "." && e.kind != kindDir {
		return e, notRootDir(zf.Name)
	}
	switch e.kind {
	case kindDir:
		if e.name == "." {
			return e, u.claimRoot(zf.Name)
		}
		_, f = u.t.add(zf.Name, e.name, kindDir)
	case kindSymlink:
		if e.target, f = u.zipLinkTarget(zf); f == nil {
			_, f = u.t.addLink(zf.Name, e.name, e.target)
		}
	default:
		if zf.UncompressedSize64 > math.MaxInt64 {
			return e, fail(ReasonArchiveTooLarge, "the archive unpacks to more than %d bytes", u.b.lim.bytes)
		}
		if f = u.b.reserve(int64(zf.UncompressedSize64)); f == nil {
			_, f = u.t.add(zf.Name, e.name, kindFile)
		}
	}
	return e, f
}

// zipKind tells what an entry makes from its name and its Unix mode;
// anything but a directory, a regular file or a symlink is refused.
func zipKind(name string, mode fs.FileMode) (entryKind, *failure) {
	switch mode.Type() {
	case fs.ModeDir:
		return kindDir, nil
	case fs.ModeSymlink:
		return kindSymlink, nil
	case 0:
		return kindFile, nil
	}
	return 0, unsafePath(name, fmt.Sprintf("its mode %v is not a directory, regular file or symlink, which unpack does not create", mode))
}

// zipLinkTarget reads a symlink entry's target: its content.
func (u *unpacker) zipLinkTarget(zf *zip.File) (string, *failure) {
	if zf.UncompressedSize64 > maxNameBytes {
		return "", unsafePath(zf.Name, "its symlink target is longer than 4096 bytes")
	}
	rc, err := zf.Open()
	if err != nil {
		return "", u.zipFailure(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxNameBytes+1))
	if err != nil {
		return "", u.zipFailure(err)
	}
	return string(b), nil
}

// writeZip writes the judged entries: the directories first, parents
// before children, then files and symlinks in the central directory's
// order, which is the order of their bytes, so the read goes front to back
// through one stream.
func (u *unpacker) writeZip(plan []zipEntry) *failure {
	var dirs []string
	for name, k := range u.t.kinds {
		if (k == kindDir || k == kindImplicit) && name != "." {
			dirs = append(dirs, name)
		}
	}
	sort.Strings(dirs) // a parent sorts before its children
	if f := u.st.mkdirs(dirs); f != nil {
		return f
	}
	for _, e := range plan {
		if e.kind == kindDir {
			if f := u.st.dir(e.name, e.meta); f != nil {
				return f
			}
		}
	}
	// The central directory lists entries in the order of their bytes in
	// every archive a writer streams; zip.File hides the local header's
	// offset, and DataOffset reads it, so another order costs requests,
	// not correctness.
	for _, e := range plan {
		if f := u.writeZipEntry(e); f != nil {
			return f
		}
	}
	return nil
}

func (u *unpacker) writeZipEntry(e zipEntry) *failure {
	switch e.kind {
	case kindSymlink:
		return u.st.symlink(e.name, e.target, e.meta)
	case kindFile:
		rc, err := e.f.Open()
		if err != nil {
			return u.zipFailure(err)
		}
		defer rc.Close()
		f, readErr := u.writeFile(e.f.Name, e.name, e.meta, int64(e.f.UncompressedSize64), rc)
		if readErr != nil {
			return u.zipFailure(readErr)
		}
		return f
	}
	return nil
}

// zipFailure judges an error reading a zip: a bound it crossed, the store
// breaking off, or a corrupt or unsupported archive.
func (u *unpacker) zipFailure(err error) *failure {
	var f *failure
	switch {
	case errors.As(err, &f):
		return f
	case u.rng.f != nil:
		return u.rng.f
	case errors.Is(err, zip.ErrAlgorithm):
		return fail(ReasonArchiveInvalid, "the archive uses a compression method unpack does not support")
	}
	return fail(ReasonArchiveInvalid, "the archive is not a valid %s: %v", u.format, err)
}

// inflaters holds klauspost inflaters between zip entries, as archive/zip
// pools its own: each holds a 32 KiB window and its tables, too much to
// allocate once per file.
var inflaters sync.Pool

// newInflater is the zip reader's deflate decompressor: klauspost's,
// which inflates faster than Go's own.
func newInflater(r io.Reader) io.ReadCloser {
	fr, ok := inflaters.Get().(io.ReadCloser)
	if ok {
		_ = fr.(flate.Resetter).Reset(r, nil) // resetting with no dictionary cannot fail
	} else {
		fr = flate.NewReader(r)
	}
	return &pooledInflater{fr: fr}
}

// pooledInflater returns its inflater to the pool when closed; after
// that it reads nothing.
type pooledInflater struct{ fr io.ReadCloser }

var errInflaterClosed = errors.New("read from a closed inflater")

func (p *pooledInflater) Read(b []byte) (int, error) {
	if p.fr == nil {
		return 0, errInflaterClosed
	}
	return p.fr.Read(b)
}

func (p *pooledInflater) Close() error {
	if p.fr == nil {
		return nil
	}
	err := p.fr.Close()
	inflaters.Put(p.fr)
	p.fr = nil
	return err
}
