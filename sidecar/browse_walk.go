package sidecar

import (
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Bounds of a listing's reads.
const (
	direntBatch   = 32 << 10 // bytes of directory records per getdents
	maxLinkTarget = 4096     // bytes of a symlink's target (PATH_MAX)
)

// Offsets in a linux_dirent64 record, which syscall.Dirent lays out.
const (
	direntIno    = unsafe.Offsetof(syscall.Dirent{}.Ino)
	direntReclen = unsafe.Offsetof(syscall.Dirent{}.Reclen)
	direntName   = unsafe.Offsetof(syscall.Dirent{}.Name)
)

var errBadDirent = errors.New("malformed directory record")

// volumePath is a requested path that passed the lexical checks: clean, and
// its components below the mount root (none for the root itself).
type volumePath struct {
	asked string // as the caller gave it, for messages
	clean string
	parts []string
}

// locate checks p lexically: absolute, without "..", inside the mount.
func (b *browser) locate(p string) (volumePath, *failure) {
	if !strings.HasPrefix(p, "/") {
		return volumePath{}, fail(ReasonPathOutsideMount, "path '%s' must be absolute, and within the workspace volume mounted at '%s'", p, b.root)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return volumePath{}, fail(ReasonEnvInvalid, "path %q holds a NUL byte", p)
	}
	// A ".." is refused, not folded: folded lexically it would disagree with
	// the filesystem after a symlink, and the server sends clean paths.
	if slices.Contains(strings.Split(p, "/"), "..") {
		return volumePath{}, fail(ReasonPathOutsideMount, "path '%s' has a '..' component; name a file within the workspace volume mounted at '%s' directly", p, b.root)
	}
	clean := path.Clean(p)
	if clean == b.root {
		return volumePath{asked: p, clean: clean}, nil
	}
	rest, ok := strings.CutPrefix(clean, strings.TrimSuffix(b.root, "/")+"/")
	if !ok {
		return volumePath{}, fail(ReasonPathOutsideMount, "path '%s' is outside the workspace volume mounted at '%s'", p, b.root)
	}
	return volumePath{asked: p, clean: clean, parts: strings.Split(rest, "/")}, nil
}

// component is the volume path of the first i+1 components.
func (l volumePath) component(root string, i int) string {
	return path.Join(root, strings.Join(l.parts[:i+1], "/"))
}

// openParent opens the directory holding the path's last component,
// walking from the mount root one component at a time with O_NOFOLLOW, so
// no symlink is followed whatever a writer does to the tree meanwhile. It
// returns that directory, for the caller to close, and the last component
// ("." for the mount root itself).
func (b *browser) openParent(l volumePath) (int, string, *failure) {
	dirfd, err := openDirNoFollow(b.rootfd, ".")
	if err != nil {
		return -1, "", pathUnreadable(l.asked, err)
	}
	if len(l.parts) == 0 {
		return dirfd, ".", nil
	}
	last := len(l.parts) - 1
	for i, c := range l.parts[:last] {
		fd, err := openDirNoFollow(dirfd, c)
		if err != nil {
			f := b.stepFailure(l, i, dirfd, err)
			syscall.Close(dirfd)
			return -1, "", f
		}
		syscall.Close(dirfd)
		dirfd = fd
	}
	return dirfd, l.parts[last], nil
}

// stepFailure explains why component i, in dirfd, did not open as a
// directory.
func (b *browser) stepFailure(l volumePath, i, dirfd int, err error) *failure {
	switch {
	case errors.Is(err, syscall.ENOENT):
		return pathNotFound(l.asked)
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
		// Linux refuses a symlink under O_NOFOLLOW|O_DIRECTORY with ENOTDIR,
		// as it does a file: tell them apart by type.
		at := l.component(b.root, i)
		if e, err := b.inspect(dirfd, l.parts[i]); err == nil && e.Type == TypeSymlink {
			return fail(ReasonPathIsSymlink, "path '%s' passes through the symlink '%s', which is reported, never followed", l.asked, at)
		}
		return fail(ReasonPathNotFound, "path '%s' does not exist: '%s' is not a directory", l.asked, at)
	}
	return pathUnreadable(l.asked, err)
}

// listed is one page of a directory, or a path's one entry.
type listed struct {
	path      string
	entries   []Entry
	nextAfter string
}

// listPath lists the directory at p, or p itself when it is anything else
// (a symlink to a directory included).
func (b *browser) listPath(p string, limit int, after string) (*listed, *failure) {
	l, f := b.locate(p)
	if f != nil {
		return nil, f
	}
	dirfd, name, f := b.openParent(l)
	if f != nil {
		return nil, f
	}
	defer syscall.Close(dirfd)
	fd, err := openDirNoFollow(dirfd, name)
	switch {
	case err == nil:
		defer syscall.Close(fd)
		entries, next, err := b.listDir(fd, limit, after)
		if err != nil {
			return nil, pathUnreadable(l.asked, err)
		}
		return &listed{path: l.clean, entries: entries, nextAfter: next}, nil
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.ELOOP):
		e, err := b.inspect(dirfd, name)
		if err != nil {
			return nil, lastFailure(l.asked, err)
		}
		return &listed{path: l.clean, entries: []Entry{e}}, nil
	}
	return nil, lastFailure(l.asked, err)
}

// listDir lists the directory fd: the limit smallest names above after, in
// byte order, each described without following it, and the After of the
// next page when more remain. It reads the whole directory in batches of
// one fixed buffer and keeps at most limit+1 names, so its memory does not
// grow with the directory; each page costs one pass over it.
//
// Paging works on names as the reply reports them. encoding/json writes
// each byte of a name that is not valid UTF-8 as U+FFFD, and after comes
// back through JSON, so it is always valid UTF-8: comparing it with the raw
// name would make a page ending in "\xf6l" (Latin-1 "öl") continue after
// "\ufffdl", which sorts below it, and that page would come back forever. So
// a name is ordered and compared with after as the bytes of its reported
// form; the order is byte order for every valid name. Two names that differ
// only in their invalid bytes report alike; when a page ends between them,
// the next page skips the second.
func (b *browser) listDir(fd, limit int, after string) ([]Entry, string, error) {
	if b.dirents == nil {
		b.dirents = make([]byte, direntBatch)
	}
	p := newPage(after, limit)
	if err := readNames(fd, b.dirents, p.offer); err != nil {
		return nil, "", err
	}
	names, more := p.sorted()
	entries := make([]Entry, 0, len(names))
	for _, n := range names {
		e, err := b.inspect(fd, string(n.raw))
		if err != nil {
			continue // gone since the directory was read
		}
		entries = append(entries, e)
	}
	next := ""
	if more {
		// The page's last name even if it vanished: the next page starts
		// after it, not over again.
		next = string(names[len(names)-1].key)
	}
	return entries, next, nil
}

// readNames calls fn with every name in the directory fd but "." and "..",
// reading its records through buf. fn must not keep the slice.
func readNames(fd int, buf []byte, fn func(name []byte)) error {
	for {
		n, err := syscall.ReadDirent(fd, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return nil
		}
		for rec := buf[:n]; len(rec) > 0; {
			size := int(binary.NativeEndian.Uint16(rec[direntReclen:]))
			if size <= int(direntName) || size > len(rec) {
				return errBadDirent
			}
			ent := rec[:size]
			rec = rec[size:]
			if binary.NativeEndian.Uint64(ent[direntIno:]) == 0 {
				continue // a deleted record
			}
			name := ent[direntName:]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if string(name) == "." || string(name) == ".." {
				continue
			}
			fn(name)
		}
	}
}

// pageName is a name as read (raw) and as a reply reports it (key, which
// is raw itself when raw is valid UTF-8). Its buffers are reused when a
// smaller name takes its slot.
type pageName struct {
	raw, key []byte
	keyBuf   []byte // key's own storage, for a name that is not valid UTF-8
}

func (n *pageName) set(raw, key []byte, valid bool) {
	n.raw = append(n.raw[:0], raw...)
	if valid {
		n.key = n.raw
		return
	}
	n.keyBuf = append(n.keyBuf[:0], key...)
	n.key = n.keyBuf
}

func comparePageNames(a, b *pageName) int {
	return cmp.Or(bytes.Compare(a.key, b.key), bytes.Compare(a.raw, b.raw))
}

// namePage keeps the keep smallest names offered above after: a max-heap,
// so the largest kept is the one a smaller name replaces. Once full, it
// copies a name into the slot it replaces, so a directory read in any
// order (descending, say) costs no allocation per name.
type namePage struct {
	after   string
	keep    int // limit+1: the one past the page tells that more remain
	names   pageHeap
	scratch []byte // the reported form of a name that is not valid UTF-8
}

func newPage(after string, limit int) *namePage {
	return &namePage{after: after, keep: limit + 1, names: make(pageHeap, 0, limit+1)}
}

// offer considers one name; raw is not kept.
func (p *namePage) offer(raw []byte) {
	key := raw
	valid := utf8.Valid(raw)
	if !valid {
		p.scratch = jsonForm(p.scratch[:0], raw)
		key = p.scratch
	}
	if string(key) <= p.after {
		return
	}
	if len(p.names) < p.keep {
		p.names = append(p.names, &pageName{})
		p.names[len(p.names)-1].set(raw, key, valid)
		heap.Fix(&p.names, len(p.names)-1)
		return
	}
	top := p.names[0]
	if c := cmp.Or(bytes.Compare(key, top.key), bytes.Compare(raw, top.raw)); c >= 0 {
		return
	}
	top.set(raw, key, valid)
	heap.Fix(&p.names, 0)
}

// sorted returns the page's names in order, and whether more remain.
func (p *namePage) sorted() ([]*pageName, bool) {
	names := p.names
	slices.SortFunc(names, comparePageNames)
	if len(names) == p.keep {
		return names[:p.keep-1], true
	}
	return names, false
}

// pageHeap is a max-heap of names for container/heap; namePage appends and
// fixes it itself, so Push and Pop are there for the interface only.
type pageHeap []*pageName

func (h pageHeap) Len() int           { return len(h) }
func (h pageHeap) Less(i, j int) bool { return comparePageNames(h[i], h[j]) > 0 }
func (h pageHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *pageHeap) Push(x any)        { *h = append(*h, x.(*pageName)) }
func (h *pageHeap) Pop() any {
	old := *h
	n := old[len(old)-1]
	*h = old[:len(old)-1]
	return n
}

// jsonForm appends raw as encoding/json writes it: each byte that begins
// no valid UTF-8 sequence becomes U+FFFD.
func jsonForm(dst, raw []byte) []byte {
	for len(raw) > 0 {
		r, size := utf8.DecodeRune(raw)
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, raw[:size]...)
		}
		raw = raw[size:]
	}
	return dst
}

// inspect describes name in dirfd without following it: fstat of an O_PATH
// descriptor of name itself (syscall has no fstatat on linux/amd64), and
// for a symlink readlinkat of that same descriptor, so both describe one
// file even if name is replaced meanwhile.
func (b *browser) inspect(dirfd int, name string) (Entry, error) {
	fd, err := openatRetry(dirfd, name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		return Entry{}, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return Entry{}, err
	}
	e := entryFromStat(name, &st)
	if e.Type == TypeSymlink {
		target, err := b.readlink(fd)
		if err != nil {
			return Entry{}, err
		}
		e.LinkTarget = &target
	}
	return e, nil
}

// readlink reads the target of the symlink that the O_PATH descriptor fd
// is, at most maxLinkTarget bytes, into the browser's one buffer.
func (b *browser) readlink(fd int) (string, error) {
	if b.link == nil {
		b.link = make([]byte, maxLinkTarget)
	}
	return readLinkAt(fd, "", b.link)
}

func entryFromStat(name string, st *syscall.Stat_t) Entry {
	e := Entry{
		Name:  name,
		Type:  entryType(st.Mode),
		Size:  st.Size,
		Mode:  fmt.Sprintf("%04o", st.Mode&0o7777),
		MTime: time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec)).UTC(),
	}
	if e.Type == TypeFile {
		e.ETag = etagOf(st) // what a write's If-Match takes
	}
	return e
}

func entryType(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return TypeFile
	case syscall.S_IFDIR:
		return TypeDir
	case syscall.S_IFLNK:
		return TypeSymlink
	}
	return TypeOther
}

// fileRange is a byte range of a regular file.
type fileRange struct {
	path string
	file Entry
	data []byte
}

// readPath reads at most length bytes from offset of the regular file at p.
// The name is judged by its type first, so that a device or FIFO is not
// even opened; the fstat of the descriptor then opened is what decides, so
// a file swapped in between is judged too (O_NONBLOCK: a FIFO opens at once
// instead of waiting for a writer).
func (b *browser) readPath(p string, offset, length int64) (*fileRange, *failure) {
	l, f := b.locate(p)
	if f != nil {
		return nil, f
	}
	if len(l.parts) == 0 {
		return nil, pathIsDirectory(p)
	}
	dirfd, name, f := b.openParent(l)
	if f != nil {
		return nil, f
	}
	defer syscall.Close(dirfd)
	e, err := b.inspect(dirfd, name)
	if err != nil {
		return nil, lastFailure(p, err)
	}
	if f := notAFile(p, e.Type); f != nil {
		return nil, f
	}
	fd, err := openatRetry(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
	if err != nil {
		return nil, b.openFailure(p, dirfd, name, err)
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, pathUnreadable(p, err)
	}
	if f := notAFile(p, entryType(st.Mode)); f != nil {
		return nil, f
	}
	data, err := b.pread(fd, offset, length)
	if err != nil {
		return nil, pathUnreadable(p, err)
	}
	return &fileRange{path: l.clean, file: entryFromStat(name, &st), data: data}, nil
}

// stat describes the path itself, whatever it is, without following it.
func (b *browser) stat(req BrowseRequest) BrowseReply {
	l, f := b.locate(req.Path)
	if f != nil {
		return refusal(f)
	}
	dirfd, name, f := b.openParent(l)
	if f != nil {
		return refusal(f)
	}
	defer syscall.Close(dirfd)
	e, err := b.inspect(dirfd, name)
	if err != nil {
		return refusal(lastFailure(req.Path, err))
	}
	return BrowseReply{OK: true, Path: l.clean, File: &e}
}

// notAFile refuses every type but a regular file.
func notAFile(p, typ string) *failure {
	switch typ {
	case TypeFile:
		return nil
	case TypeDir:
		return pathIsDirectory(p)
	case TypeSymlink:
		return pathIsSymlink(p)
	}
	return pathNotRegular(p)
}

// openFailure explains why the file to read did not open.
func (b *browser) openFailure(p string, dirfd int, name string, err error) *failure {
	switch {
	case errors.Is(err, syscall.ELOOP):
		return pathIsSymlink(p)
	case errors.Is(err, syscall.ENOENT):
		return pathNotFound(p)
	}
	// Replaced since it was judged: by something that cannot be opened at
	// all, perhaps (a socket answers ENXIO).
	if e, serr := b.inspect(dirfd, name); serr == nil && e.Type != TypeFile {
		return notAFile(p, e.Type)
	}
	return pathUnreadable(p, err)
}

// pread reads up to length bytes from offset into the browser's buffer, as
// many as the file holds then: a file growing meanwhile yields what pread
// returns, never more than length.
func (b *browser) pread(fd int, offset, length int64) ([]byte, error) {
	if b.data == nil {
		b.data = make([]byte, MaxReadBytes)
	}
	buf := b.data[:min(length, math.MaxInt64-offset)]
	n := 0
	for n < len(buf) {
		m, err := syscall.Pread(fd, buf[n:], offset+int64(n))
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

func openatRetry(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, 0)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// openDirNoFollow opens the directory name in dirfd, never through a symlink; a
// FIFO or device there fails at once (ENOTDIR) without being opened.
func openDirNoFollow(dirfd int, name string) (int, error) {
	return openatRetry(dirfd, name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
}

// lastFailure explains why the last component could not be described.
func lastFailure(p string, err error) *failure {
	if errors.Is(err, syscall.ENOENT) {
		return pathNotFound(p)
	}
	return pathUnreadable(p, err)
}

func pathNotFound(p string) *failure {
	return fail(ReasonPathNotFound, "path '%s' does not exist", p)
}

func pathIsDirectory(p string) *failure {
	return fail(ReasonPathIsDirectory, "path '%s' is a directory; list it instead of reading it", p)
}

func pathIsSymlink(p string) *failure {
	return fail(ReasonPathIsSymlink, "path '%s' is a symlink, which is reported, never followed", p)
}

func pathNotRegular(p string) *failure {
	return fail(ReasonPathNotRegular, "path '%s' is not a regular file", p)
}

// pathUnreadable names the OS error only: a syscall.Errno carries no path.
func pathUnreadable(p string, err error) *failure {
	return fail(ReasonPathUnreadable, "path '%s' cannot be read: %v", p, err)
}
