package sidecar

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// restoreStage is the staging directory a restore builds the new tree in,
// at the mount root, closed to everyone else (0700, the restore's own
// owner, no set-gid inherited from the root) until the tree is complete.
// Every entry is created relative to its directory's descriptor, files
// O_EXCL and O_NOFOLLOW; the directories are opened through an os.Root of
// the staging directory, so nothing the tree holds leads outside it.
type restoreStage struct {
	m   *mount
	dir *os.File // the mount root
	id  string
	// mtime is the root's before the staging directory came and went:
	// an abort puts it back.
	mtime syscall.Timespec
	root  *os.Root // the staging directory
	top   *os.File // the staging directory, open
	// at is the directory the last entry was in, kept open: the entries
	// of a directory mostly come together.
	at     *os.File
	atName string
}

func newRestoreStage(m *mount, dir *os.File) (*restoreStage, *failure) {
	var random [restoreIDLen / 2]byte
	_, _ = rand.Read(random[:]) // never fails on Linux
	s := &restoreStage{m: m, dir: dir, id: hex.EncodeToString(random[:])}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(dir.Fd()), &st); err != nil {
		return nil, writeFailure(err, "cannot read the volume mounted at '%s': %s", m.path, errno(err))
	}
	s.mtime = st.Mtim
	name := restoreStaging + s.id
	if err := syscall.Mkdirat(int(dir.Fd()), name, stagingMode); err != nil {
		return nil, writeFailure(err, "cannot create a directory in '%s' to restore into: %s", m.path, errno(err))
	}
	if err := s.openStaging(name); err != nil {
		_ = m.root.RemoveAll(name)
		return nil, writeFailure(err, "cannot prepare the directory to restore into: %s", errno(err))
	}
	return s, nil
}

// openStaging opens the new staging directory and makes it the restore's
// own: below a set-gid root it was born with the root's group and set-gid,
// which everything made in it would inherit.
func (s *restoreStage) openStaging(name string) error {
	var err error
	if s.root, err = s.m.root.OpenRoot(name); err != nil {
		return err
	}
	if s.top, err = s.root.Open("."); err == nil {
		if err = s.top.Chown(os.Geteuid(), os.Getegid()); err == nil {
			err = s.top.Chmod(stagingMode)
		}
	}
	if err != nil {
		s.close()
	}
	return err
}

// dirOf returns the directory holding the staged rel, and rel's last
// element.
func (s *restoreStage) dirOf(rel string) (int, string, error) {
	dir, base := path.Split(rel)
	dir = path.Clean(dir)
	if s.at == nil || s.atName != dir {
		s.closeAt()
		at, err := s.root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW, 0)
		if err != nil {
			return 0, "", err
		}
		s.at, s.atName = at, dir
	}
	return int(s.at.Fd()), base, nil
}

func (s *restoreStage) closeAt() {
	if s.at != nil {
		s.at.Close()
		s.at, s.atName = nil, ""
	}
}

// create creates the regular file rel, empty, for writing.
func (s *restoreStage) create(rel string) (*os.File, error) {
	dirfd, base, err := s.dirOf(rel)
	if err != nil {
		return nil, err
	}
	fd, err := openatRetrying(dirfd, base, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// open opens the staged regular file rel for reading.
func (s *restoreStage) open(rel string) (*os.File, error) {
	dirfd, base, err := s.dirOf(rel)
	if err != nil {
		return nil, err
	}
	fd, err := openatRetrying(dirfd, base, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// shown is where rel will be in the volume, for messages.
func (s *restoreStage) shown(rel string) string { return s.m.display(rel) }

func (s *restoreStage) writeFailed(rel string, err error) *failure {
	return writeFailure(err, "failed to restore '%s': %s", s.shown(rel), errno(err))
}

// abort removes the staging directory: the volume is as it was, the
// root's mtime included.
func (s *restoreStage) abort() {
	s.close()
	if s.m.root.RemoveAll(restoreStaging+s.id) == nil {
		_ = setTimes(int(s.dir.Fd()), "", time.Unix(s.mtime.Unix()))
	}
}

func (s *restoreStage) close() {
	s.closeAt()
	if s.top != nil {
		s.top.Close()
	}
	s.root.Close()
}

// swap commits the staged tree, then swaps it in (restore_swap.go). A
// failure to commit removes the staging directory; a failure after it is
// left for the next restore to finish.
func (s *restoreStage) swap(entries []ManifestEntry, stop func(string) bool) *failure {
	s.close()
	sw := &swap{root: s.m.root, dir: int(s.dir.Fd()), id: s.id, mtime: &entries[0].MTimeNS, stop: stop}
	if err := sw.at("staged"); err != nil {
		return swapFailure(err, s.m.path)
	}
	if err := syscall.Renameat(sw.dir, restoreStaging+s.id, sw.dir, restoreSwap+s.id); err != nil {
		_ = s.m.root.RemoveAll(restoreStaging + s.id)
		return writeFailure(err, "failed to commit the restored tree in '%s': %s", s.m.path, errno(err))
	}
	err := sw.at("commit")
	if err == nil {
		err = sw.run()
	}
	if err == nil {
		err = retime(sw.dir, entries)
	}
	return swapFailure(err, s.m.path)
}

func swapFailure(err error, display string) *failure {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errStopped):
		return fail(ReasonWriteFailed, "the restore stopped where a test asked it to")
	}
	return writeFailure(err, "the restore of '%s' is committed but its swap failed (the next restore finishes it): %s", display, errno(err))
}

// retime gives the root's own entries their mtimes again: the swap moved
// each to another directory, which rewrites a directory's ".." entry, and
// a filesystem may count that as a change. Setting a child's times leaves
// the root's alone.
func retime(rootfd int, entries []ManifestEntry) error {
	for _, e := range entries[1:] {
		if strings.Contains(e.Path, "/") {
			continue
		}
		if err := setTimes(rootfd, e.Path, time.Unix(0, e.MTimeNS)); err != nil {
			return err
		}
	}
	return nil
}

// builder builds a manifest's tree in the staging directory: the
// directories, symlinks and empty files first, then the content, fetched
// LocateBatch digests at a time, then every entry's owner, mode and mtime,
// deepest first, since creating an entry moves its directory's mtime.
type builder struct {
	st     *restoreStage
	man    *manifest
	client *http.Client
	talk   *conversation
	moved  *progress // the bytes of files written, when asked
	status int       // the store's answer to a failed download
	// cached is the last bundle fetched, by its object's URL without the
	// query: bundles are written in walk order, so the next locate often
	// names the same one again, signed anew.
	cached struct {
		key, url string
		data     []byte
	}
}

func (b *builder) build() *failure {
	if f := b.skeleton(); f != nil {
		return f
	}
	if f := b.contents(); f != nil {
		return f
	}
	return b.settle()
}

// skeleton creates everything but the files' content.
func (b *builder) skeleton() *failure {
	for _, e := range b.man.entries[1:] {
		var err error
		switch {
		case e.Type == ManifestDir:
			err = b.mkdir(e.Path)
		case e.Type == ManifestSymlink:
			err = b.symlink(e.Path, e.Target)
		case e.Size == 0:
			var f *os.File
			if f, err = b.st.create(e.Path); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return b.st.writeFailed(e.Path, err)
		}
	}
	return nil
}

func (b *builder) mkdir(rel string) error {
	dirfd, base, err := b.st.dirOf(rel)
	if err != nil {
		return err
	}
	return syscall.Mkdirat(dirfd, base, stagingMode)
}

func (b *builder) symlink(rel, target string) error {
	dirfd, base, err := b.st.dirOf(rel)
	if err != nil {
		return err
	}
	return symlinkAt(target, dirfd, base)
}

// symlinkAt is symlinkat(2), which package syscall does not offer.
func symlinkAt(target string, dirfd int, name string) error {
	tp, err := syscall.BytePtrFromString(target)
	if err != nil {
		return err
	}
	np, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall(syscall.SYS_SYMLINKAT, uintptr(unsafe.Pointer(tp)), uintptr(dirfd), uintptr(unsafe.Pointer(np)))
	if errno != 0 {
		return errno
	}
	return nil
}

// contents writes every non-empty file: each digest's content is fetched
// once and written to every path that holds it.
func (b *builder) contents() *failure {
	paths := map[string][]string{}
	var order []string
	for _, e := range b.man.entries {
		if e.Type != ManifestFile || e.Size == 0 {
			continue
		}
		if _, seen := paths[e.SHA256]; !seen {
			order = append(order, e.SHA256)
		}
		paths[e.SHA256] = append(paths[e.SHA256], e.Path)
	}
	for start := 0; start < len(order); start += LocateBatch {
		batch := order[start:min(start+LocateBatch, len(order))]
		if f := b.locateAndWrite(batch, paths); f != nil {
			return f
		}
	}
	return nil
}

// located is one locate's answer with the digests it answers and the
// paths that hold each.
type located struct {
	digests []string
	Grant
	paths map[string][]string
}

// digest is the i-th digest asked about, its location and its first path.
func (l *located) digest(i int) (string, Location, string) {
	return l.digests[i], l.Locations[i], l.paths[l.digests[i]][0]
}

// locateAndWrite asks where a batch of digests is and writes them, an
// object at a time.
func (b *builder) locateAndWrite(batch []string, paths map[string][]string) *failure {
	g, f := b.locate(batch)
	if f != nil {
		return f
	}
	l := &located{digests: batch, Grant: g, paths: paths}
	byObject := make([][]int, len(g.URLs))
	for i, loc := range g.Locations {
		byObject[loc.Object] = append(byObject[loc.Object], i)
	}
	for obj, members := range byObject {
		if len(members) == 0 {
			continue
		}
		var f *failure
		if g.Locations[members[0]].Bundle {
			f = b.fromBundle(l, g.URLs[obj], members)
		} else {
			f = b.fromBlob(l, g.URLs[obj], members[0])
		}
		if f != nil {
			return f
		}
	}
	return nil
}

// locate asks where each digest of batch is, and checks the answer: one
// location per digest, each in an object of the answer, of the digest's
// size, within a bundle's bound; an object that is not a bundle holds
// exactly one content, from its first byte.
func (b *builder) locate(batch []string) (Grant, *failure) {
	what := fmt.Sprintf("where %d contents are stored", len(batch))
	g, f := b.talk.exchange(Need{Need: NeedLocate, Digests: batch}, what)
	if f != nil {
		return Grant{}, f
	}
	bad := func(why string) (Grant, *failure) {
		return Grant{}, fail(ReasonEnvInvalid, "the answer for %s is out of protocol: %s", what, why)
	}
	if len(g.Locations) != len(batch) {
		return bad(fmt.Sprintf("%d locations for %d digests", len(g.Locations), len(batch)))
	}
	for _, u := range g.URLs {
		if u == "" {
			return bad("an empty URL")
		}
	}
	kinds := map[int]bool{}
	blobs := map[int]int{}
	for i, l := range g.Locations {
		want := b.man.sizes[batch[i]]
		switch {
		case l.Object < 0 || l.Object >= len(g.URLs):
			return bad("a location in an object it does not name")
		case l.Size != want:
			return bad(fmt.Sprintf("a location of %d bytes for content of %d", l.Size, want))
		case l.Offset < 0 || (l.Bundle && l.Offset > BundleMaxBytes-l.Size):
			return bad("a location beyond a bundle's bounds")
		case !l.Bundle && l.Offset != 0:
			return bad("a location inside an object that is not a bundle")
		}
		if bundle, seen := kinds[l.Object]; seen && bundle != l.Bundle {
			return bad("an object that is a bundle for some contents and not for others")
		}
		kinds[l.Object] = l.Bundle
		if !l.Bundle {
			if blobs[l.Object]++; blobs[l.Object] > 1 {
				return bad("an object that is not a bundle holding two contents")
			}
		}
	}
	return g, nil
}

// fromBlob streams the one content of an object that is not a bundle
// into its first path, checking its digest as it is written, and copies
// it to the others.
func (b *builder) fromBlob(l *located, url string, i int) *failure {
	digest, loc, first := l.digest(i)
	resp, status, f := get(b.client, url)
	if f != nil {
		b.status = status
		return f
	}
	defer resp.Body.Close()
	if resp.ContentLength >= 0 && resp.ContentLength != loc.Size {
		return b.mismatch(first, fmt.Sprintf("the store holds %d bytes for its %d", resp.ContentLength, loc.Size))
	}
	if f := b.writeStream(first, digest, loc.Size, resp.Body); f != nil {
		return f
	}
	for _, p := range l.paths[digest][1:] {
		if f := b.copyFile(first, p); f != nil {
			return f
		}
	}
	return nil
}

// writeStream writes size bytes of r to the new file rel, hashing them; a
// stream of other bytes, or more or fewer, is the store's corruption.
func (b *builder) writeStream(rel, digest string, size int64, r io.Reader) *failure {
	out, err := b.st.create(rel)
	if err != nil {
		return b.st.writeFailed(rel, err)
	}
	defer out.Close()
	h := sha256.New()
	in := &readRecorder{r: b.moved.reader(io.LimitReader(r, size+1))}
	n, err := io.CopyBuffer(writerOnly{io.MultiWriter(out, h)}, in, make([]byte, copyBuffer))
	switch {
	case in.err != nil:
		return unreachable("download", in.err)
	case err != nil:
		return b.st.writeFailed(rel, err)
	case n != size:
		return b.mismatch(rel, fmt.Sprintf("the store holds more or fewer bytes than its %d", size))
	case hex.EncodeToString(h.Sum(nil)) != digest:
		return b.mismatch(rel, "the store's bytes do not hash to its digest")
	}
	if err := out.Close(); err != nil {
		return b.st.writeFailed(rel, err)
	}
	return nil
}

// copyFile copies the staged file from, already checked, to the new file
// to.
func (b *builder) copyFile(from, to string) *failure {
	in, err := b.st.open(from)
	if err != nil {
		return b.st.writeFailed(from, err)
	}
	defer in.Close()
	out, err := b.st.create(to)
	if err != nil {
		return b.st.writeFailed(to, err)
	}
	defer out.Close()
	if _, err := io.Copy(out, b.moved.reader(in)); err != nil {
		return b.st.writeFailed(to, err)
	}
	if err := out.Close(); err != nil {
		return b.st.writeFailed(to, err)
	}
	return nil
}

// fromBundle fetches a bundle once (or takes it from the cache), checks
// every member the batch needs from it, then writes them.
func (b *builder) fromBundle(l *located, url string, members []int) *failure {
	data, fresh, f := b.bundle(url)
	if f != nil {
		return f
	}
	bad := b.checkMembers(l, data, members)
	if bad != nil && !fresh {
		// The cache took another object for this one: fetch it.
		if data, _, f = b.fetchBundle(url); f != nil {
			return f
		}
		bad = b.checkMembers(l, data, members)
	}
	if bad != nil {
		return bad
	}
	for _, i := range members {
		digest, loc, _ := l.digest(i)
		for _, p := range l.paths[digest] {
			if f := b.writeBytes(p, data[loc.Offset:loc.Offset+loc.Size]); f != nil {
				return f
			}
		}
	}
	return nil
}

// checkMembers checks that each member lies within the bundle and hashes
// to its digest.
func (b *builder) checkMembers(l *located, data []byte, members []int) *failure {
	for _, i := range members {
		digest, loc, first := l.digest(i)
		if loc.Offset+loc.Size > int64(len(data)) {
			return b.mismatch(first, fmt.Sprintf("the store's bundle of %d bytes does not hold it", len(data)))
		}
		sum := sha256.Sum256(data[loc.Offset : loc.Offset+loc.Size])
		if hex.EncodeToString(sum[:]) != digest {
			return b.mismatch(first, "the store's bytes do not hash to its digest")
		}
	}
	return nil
}

// bundle returns the bundle at url: the cached one when it is the same
// object (fresh false when its URL was signed otherwise), else fetched.
func (b *builder) bundle(rawURL string) ([]byte, bool, *failure) {
	if key := objectKey(rawURL); key != "" && key == b.cached.key {
		return b.cached.data, rawURL == b.cached.url, nil
	}
	return b.fetchBundle(rawURL)
}

// fetchBundle reads a whole bundle, within BundleMaxBytes, into the
// cache's buffer.
func (b *builder) fetchBundle(rawURL string) ([]byte, bool, *failure) {
	b.cached.key, b.cached.url = "", ""
	resp, status, f := get(b.client, rawURL)
	if f != nil {
		b.status = status
		return nil, false, f
	}
	defer resp.Body.Close()
	if resp.ContentLength > BundleMaxBytes {
		return nil, false, fail(ReasonDigestMismatch, "the store holds a bundle of %d bytes, over the %d a bundle may hold", resp.ContentLength, BundleMaxBytes)
	}
	if b.cached.data == nil {
		b.cached.data = make([]byte, BundleMaxBytes)
	}
	n, more, err := readUpTo(resp.Body, b.cached.data[:BundleMaxBytes])
	switch {
	case err != nil:
		return nil, false, unreachable("download", err)
	case more:
		return nil, false, fail(ReasonDigestMismatch, "the store holds a bundle over the %d bytes a bundle may hold", BundleMaxBytes)
	}
	b.cached.key, b.cached.url, b.cached.data = objectKey(rawURL), rawURL, b.cached.data[:n]
	return b.cached.data, true, nil
}

// readUpTo reads r to its end into buf; more reports bytes past buf.
func readUpTo(r io.Reader, buf []byte) (n int, more bool, err error) {
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return n, false, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	var probe [1]byte
	for {
		m, err := r.Read(probe[:])
		switch {
		case m > 0:
			return n, true, nil
		case errors.Is(err, io.EOF):
			return n, false, nil
		case err != nil:
			return n, false, err
		}
	}
}

// objectKey is a URL without its query: what names an object of the
// store, however it was signed; "" when it does not parse.
func objectKey(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String()
}

// writeBytes writes checked content to the new file rel.
func (b *builder) writeBytes(rel string, content []byte) *failure {
	out, err := b.st.create(rel)
	if err != nil {
		return b.st.writeFailed(rel, err)
	}
	defer out.Close()
	if _, err := out.Write(content); err != nil {
		return b.st.writeFailed(rel, err)
	}
	b.moved.add(int64(len(content)))
	if err := out.Close(); err != nil {
		return b.st.writeFailed(rel, err)
	}
	return nil
}

func (b *builder) mismatch(rel, why string) *failure {
	return fail(ReasonDigestMismatch, "the content of '%s' is not the snapshot's: %s", b.st.shown(rel), why)
}

// settle gives every entry its owner, mode and mtime, the last entry
// first: a directory comes after everything in it, so nothing moves its
// mtime once set. The staging directory gets the root's, which the swap
// hands on to the mount root.
func (b *builder) settle() *failure {
	entries := b.man.entries
	for i := len(entries) - 1; i >= 1; i-- {
		e := &entries[i]
		dirfd, base, err := b.st.dirOf(e.Path)
		if err == nil {
			err = settleEntry(dirfd, base, e)
		}
		if err != nil {
			return b.st.writeFailed(e.Path, err)
		}
	}
	b.st.closeAt()
	root := &entries[0]
	fd := int(b.st.top.Fd())
	err := setDirOwnerMode(fd, "", root.Mode, root.UID, root.GID)
	if err == nil {
		err = setTimes(fd, "", time.Unix(0, root.MTimeNS))
	}
	if err != nil {
		return writeFailure(err, "failed to restore the root of '%s': %s", b.st.m.path, errno(err))
	}
	return nil
}

// settleEntry gives one entry its metadata. A file is chowned first, then
// chmodded: a chown clears a file's set-uid bit (set-gid too when group
// execution is allowed), even root's. A symlink has no mode of its own.
func settleEntry(dirfd int, base string, e *ManifestEntry) error {
	switch e.Type {
	case ManifestDir:
		if err := setDirOwnerMode(dirfd, base, e.Mode, e.UID, e.GID); err != nil {
			return err
		}
	case ManifestFile:
		if err := syscall.Fchownat(dirfd, base, e.UID, e.GID, atSymlinkNoFollow); err != nil {
			return err
		}
		if err := syscall.Fchmodat(dirfd, base, e.Mode, 0); err != nil {
			return err
		}
	default:
		if err := syscall.Fchownat(dirfd, base, e.UID, e.GID, atSymlinkNoFollow); err != nil {
			return err
		}
	}
	return setTimes(dirfd, base, time.Unix(0, e.MTimeNS))
}
