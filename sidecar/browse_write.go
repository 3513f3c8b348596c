package sidecar

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// The writes of a writable serve: put, rm, mkdir and mv. Each walks to the
// parent of its path as a read does — from the mount root, one component
// at a time with O_NOFOLLOW — and acts on the last component through that
// directory's descriptor, so a symlink swapped in on the way, or at the
// name itself, cannot lead it to another file, let alone out of the volume.
//
// Owners and modes: a new file or directory takes the owner of the
// directory it is made in and mode 0666 or 0777 (the volume root's rule:
// root-owned, 0777), so that every tool container of the workspace can
// rewrite it whatever its UID; a request may name another mode. A file
// written over keeps its owner and mode.

const (
	defaultMaxWrite = 16 << 20
	newFileMode     = 0o666
	newDirMode      = 0o777
	// maxRemoveDepth bounds a recursive remove's descent, which holds one
	// descriptor per level.
	maxRemoveDepth = 1024
	// removeBatch bounds the names a recursive remove holds at once.
	removeBatch = 4096
)

// change answers one write: the path it acted on and, but for rm, what is
// there now.
func (b *browser) change(req BrowseRequest, body []byte) BrowseReply {
	var (
		w *written
		f *failure
	)
	switch req.Op {
	case OpPut:
		w, f = b.put(req, body)
	case OpRemove:
		w, f = b.remove(req)
	case OpMkdir:
		w, f = b.mkdir(req)
	case OpMove:
		w, f = b.move(req)
	}
	if f != nil {
		return refusal(f)
	}
	return BrowseReply{OK: true, Path: w.path, File: w.entry}
}

type written struct {
	path  string
	entry *Entry
}

// maxBody is the most a put may carry to this serve: none to a reader.
func (b *browser) maxBody() int64 {
	if !b.writable {
		return 0
	}
	return b.maxWrite
}

// put writes body to a temporary file beside the target, flushes it and
// renames it into place, so a reader sees the old file or the new one,
// never a part. IfMatch and CreateOnly are judged on what the name holds
// just before; CreateOnly's rename refuses, atomically, a file made since.
func (b *browser) put(req BrowseRequest, body []byte) (*written, *failure) {
	mode, f := parseMode(req.Mode)
	if f != nil {
		return nil, f
	}
	l, dirfd, name, f := b.openTarget(req.Path)
	if f != nil {
		return nil, f
	}
	defer syscall.Close(dirfd)
	if len(l.parts) == 0 {
		return nil, pathIsDirectory(req.Path)
	}
	now, f := b.judgePut(req, dirfd, name)
	if f != nil {
		return nil, f
	}
	meta, f := newMeta(req.Path, dirfd, now, mode, newFileMode)
	if f != nil {
		return nil, f
	}
	file, temp, f := createTemp(dirfd, req.Path)
	if f != nil {
		return nil, f
	}
	defer file.Close()
	if f := writeOut(file, body, meta, req.Path); f != nil {
		_ = removeAt(dirfd, temp, 0)
		return nil, f
	}
	if f := publish(dirfd, temp, name, req); f != nil {
		_ = removeAt(dirfd, temp, 0)
		return nil, f
	}
	// The rename changes the file's ctime: describe it after.
	var st syscall.Stat_t
	if err := syscall.Fstat(int(file.Fd()), &st); err != nil {
		return nil, writeFailure(err, "cannot describe '%s' once written: %v", req.Path, err)
	}
	e := entryFromStat(name, &st)
	return &written{path: l.clean, entry: &e}, nil
}

// openTarget checks p and opens the directory holding its last component.
func (b *browser) openTarget(p string) (volumePath, int, string, *failure) {
	l, f := b.locate(p)
	if f != nil {
		return volumePath{}, -1, "", f
	}
	dirfd, name, f := b.openParent(l)
	if f != nil {
		return volumePath{}, -1, "", f
	}
	return l, dirfd, name, nil
}

// judgePut returns what the target's name holds now (nil for nothing),
// refusing anything but a regular file, and a file the request's
// conditions rule out.
func (b *browser) judgePut(req BrowseRequest, dirfd int, name string) (*syscall.Stat_t, *failure) {
	now, err := lstatAt(dirfd, name)
	switch {
	case errors.Is(err, syscall.ENOENT):
		if req.IfMatch != "" {
			return nil, fail(ReasonFileChanged, "path '%s' no longer exists; it had the ETag %s", req.Path, req.IfMatch)
		}
		return nil, nil
	case err != nil:
		return nil, pathUnreadable(req.Path, err)
	}
	if f := notAFile(req.Path, entryType(now.Mode)); f != nil {
		return nil, f
	}
	switch {
	case req.CreateOnly:
		return nil, fail(ReasonTargetExists, "path '%s' exists; it was to be created only", req.Path)
	case req.IfMatch != "" && req.IfMatch != etagOf(now):
		return nil, fail(ReasonFileChanged, "path '%s' changed since it was read: its ETag is %s, not %s", req.Path, etagOf(now), req.IfMatch)
	}
	return now, nil
}

// fileMeta is the owner and mode a written file or made directory gets.
type fileMeta struct {
	mode     uint32
	uid, gid int
}

// newMeta is what a write gives its result: the named mode, or the file's
// own, or the default; the file's owner, or the directory's.
func newMeta(p string, dirfd int, now *syscall.Stat_t, mode *uint32, def uint32) (fileMeta, *failure) {
	owner := now
	if owner == nil {
		var st syscall.Stat_t
		if err := syscall.Fstat(dirfd, &st); err != nil {
			return fileMeta{}, pathUnreadable(p, err)
		}
		owner = &st
	}
	m := fileMeta{mode: def, uid: int(owner.Uid), gid: int(owner.Gid)}
	switch {
	case mode != nil:
		m.mode = *mode
	case now != nil:
		m.mode = now.Mode & 0o777
	}
	return m, nil
}

// writeOut fills the temporary file, gives it its mode and owner and
// flushes it, so that the rename publishes only bytes that are on disk.
// The chmod comes before the chown, so it needs no CAP_FOWNER.
func writeOut(file *os.File, body []byte, m fileMeta, p string) *failure {
	_, err := file.Write(body)
	if err == nil {
		err = file.Chmod(os.FileMode(m.mode))
	}
	if err == nil {
		err = file.Chown(m.uid, m.gid)
	}
	if err == nil {
		err = file.Sync()
	}
	if err != nil {
		return writeFailure(err, "failed to write '%s': %s", p, errno(err))
	}
	return nil
}

// publish renames the written temporary file over the target, or beside
// none for CreateOnly.
func publish(dirfd int, temp, name string, req BrowseRequest) *failure {
	var err error
	if req.CreateOnly {
		err = renameExclusive(dirfd, temp, dirfd, name)
	} else {
		err = syscall.Renameat(dirfd, temp, dirfd, name)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EEXIST) && req.CreateOnly:
		return fail(ReasonTargetExists, "path '%s' was created meanwhile; it was to be created only", req.Path)
	case errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return pathIsDirectory(req.Path)
	}
	return writeFailure(err, "failed to write '%s': %s", req.Path, errno(err))
}

// remove removes the file, symlink or empty directory at the path, or with
// Recursive a directory and everything under it. The mount root stays.
func (b *browser) remove(req BrowseRequest) (*written, *failure) {
	l, dirfd, name, f := b.openTarget(req.Path)
	if f != nil {
		return nil, f
	}
	defer syscall.Close(dirfd)
	if len(l.parts) == 0 {
		return nil, fail(ReasonPathIsMountRoot, "'%s' is the workspace volume's mount root, which cannot be removed; remove what it holds", req.Path)
	}
	now, err := lstatAt(dirfd, name)
	if err != nil {
		return nil, lastFailure(req.Path, err)
	}
	if entryType(now.Mode) != TypeDir {
		err = removeAt(dirfd, name, 0)
	} else if req.Recursive {
		err = removeTree(dirfd, name, 0)
	} else {
		err = removeAt(dirfd, name, atRemoveDir)
	}
	switch {
	case err == nil:
		return &written{path: l.clean}, nil
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return nil, fail(ReasonDirNotEmpty, "directory '%s' is not empty; remove it recursively to remove what it holds", req.Path)
	case errors.Is(err, syscall.ENOENT):
		return nil, pathNotFound(req.Path)
	}
	return nil, writeFailure(err, "failed to remove '%s': %s", req.Path, errno(err))
}

var errTooDeep = errors.New("the tree is too deep to remove")

// removeTree removes the directory name in dirfd with everything under it.
// Every directory is opened from its parent's descriptor with O_NOFOLLOW,
// so a symlink swapped in is removed as a name, never followed. Names are
// taken removeBatch at a time, the directory reread from its start after
// each batch, so that its size does not bound the memory.
func removeTree(dirfd int, name string, depth int) error {
	if depth >= maxRemoveDepth {
		return errTooDeep
	}
	fd, err := openDirNoFollow(dirfd, name)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	buf := make([]byte, direntBatch)
	for {
		batch, err := someNames(fd, buf)
		if err != nil {
			return err
		}
		if len(batch) == 0 {
			break
		}
		for _, n := range batch {
			if err := removeName(fd, n, depth); err != nil {
				return err
			}
		}
	}
	return removeAt(dirfd, name, atRemoveDir)
}

// removeName removes one name of the directory fd, whatever it is.
func removeName(fd int, name string, depth int) error {
	err := removeAt(fd, name, 0)
	if errors.Is(err, syscall.EISDIR) {
		err = removeTree(fd, name, depth+1)
	}
	if errors.Is(err, syscall.ENOENT) {
		return nil // removed meanwhile
	}
	return err
}

// someNames reads up to removeBatch names of the directory fd from its
// start.
func someNames(fd int, buf []byte) ([]string, error) {
	if _, err := syscall.Seek(fd, 0, 0); err != nil {
		return nil, err
	}
	var names []string
	err := readNames(fd, buf, func(n []byte) {
		if len(names) < removeBatch {
			names = append(names, string(n))
		}
	})
	return names, err
}

// mkdir makes a directory; with Parents, every missing one on the way, and
// an existing directory is no error.
func (b *browser) mkdir(req BrowseRequest) (*written, *failure) {
	mode, f := parseMode(req.Mode)
	if f != nil {
		return nil, f
	}
	l, f := b.locate(req.Path)
	if f != nil {
		return nil, f
	}
	if len(l.parts) == 0 {
		if !req.Parents {
			return nil, fail(ReasonTargetExists, "'%s' is the workspace volume's mount root, which exists", req.Path)
		}
		return b.describeDir(l, b.rootfd, ".")
	}
	if !req.Parents {
		dirfd, name, f := b.openParent(l)
		if f != nil {
			return nil, f
		}
		defer syscall.Close(dirfd)
		fd, f := makeDir(req.Path, dirfd, name, mode)
		if f != nil {
			return nil, f
		}
		defer syscall.Close(fd)
		return b.describeDir(l, dirfd, name)
	}
	return b.mkdirAll(l, mode)
}

// mkdirAll walks from the mount root making each missing directory.
func (b *browser) mkdirAll(l volumePath, mode *uint32) (*written, *failure) {
	dirfd, err := openDirNoFollow(b.rootfd, ".")
	if err != nil {
		return nil, pathUnreadable(l.asked, err)
	}
	last := len(l.parts) - 1
	for i := range l.parts[:last] {
		fd, f := b.stepInto(l, i, dirfd, mode)
		syscall.Close(dirfd)
		if f != nil {
			return nil, f
		}
		dirfd = fd
	}
	defer syscall.Close(dirfd)
	fd, f := b.stepInto(l, last, dirfd, mode)
	if f != nil {
		return nil, f
	}
	syscall.Close(fd)
	return b.describeDir(l, dirfd, l.parts[last])
}

// stepInto opens component i of l in dirfd as a directory, making it when
// it is missing.
func (b *browser) stepInto(l volumePath, i, dirfd int, mode *uint32) (int, *failure) {
	fd, err := openDirNoFollow(dirfd, l.parts[i])
	if errors.Is(err, syscall.ENOENT) {
		made, f := makeDir(l.asked, dirfd, l.parts[i], mode)
		if f == nil || f.reason != ReasonTargetExists {
			return made, f
		}
		fd, err = openDirNoFollow(dirfd, l.parts[i]) // made meanwhile
	}
	if err != nil {
		return -1, b.stepFailure(l, i, dirfd, err)
	}
	return fd, nil
}

// makeDir makes the directory name in dirfd with the new directory's rule
// and returns it open.
func makeDir(p string, dirfd int, name string, mode *uint32) (int, *failure) {
	meta, f := newMeta(p, dirfd, nil, mode, newDirMode)
	if f != nil {
		return -1, f
	}
	if err := syscall.Mkdirat(dirfd, name, 0o700); err != nil {
		if errors.Is(err, syscall.EEXIST) {
			return -1, fail(ReasonTargetExists, "path '%s' exists", p)
		}
		return -1, writeFailure(err, "failed to make the directory '%s': %s", p, errno(err))
	}
	fd, err := openDirNoFollow(dirfd, name)
	if err == nil {
		err = syscall.Fchmod(fd, meta.mode)
		if err == nil {
			err = syscall.Fchown(fd, meta.uid, meta.gid)
		}
		if err != nil {
			syscall.Close(fd)
		}
	}
	if err != nil {
		return -1, writeFailure(err, "failed to make the directory '%s': %s", p, errno(err))
	}
	return fd, nil
}

func (b *browser) describeDir(l volumePath, dirfd int, name string) (*written, *failure) {
	e, err := b.inspect(dirfd, name)
	if err != nil {
		return nil, lastFailure(l.asked, err)
	}
	if name == "." {
		e.Name = "."
	}
	return &written{path: l.clean, entry: &e}, nil
}

// move renames Path to To, replacing what To names only with Overwrite.
func (b *browser) move(req BrowseRequest) (*written, *failure) {
	from, fromDir, fromName, f := b.openTarget(req.Path)
	if f != nil {
		return nil, f
	}
	defer syscall.Close(fromDir)
	to, toDir, toName, f := b.openTarget(req.To)
	if f != nil {
		return nil, f
	}
	defer syscall.Close(toDir)
	switch {
	case len(from.parts) == 0 || len(to.parts) == 0:
		return nil, fail(ReasonPathIsMountRoot, "the workspace volume's mount root '%s' can be neither moved nor replaced", b.root)
	case strings.HasPrefix(to.clean+"/", from.clean+"/"):
		return nil, fail(ReasonEnvInvalid, "'%s' cannot be moved into itself ('%s')", req.Path, req.To)
	}
	if _, err := lstatAt(fromDir, fromName); err != nil {
		return nil, lastFailure(req.Path, err)
	}
	var err error
	if req.Overwrite {
		err = syscall.Renameat(fromDir, fromName, toDir, toName)
	} else {
		err = renameExclusive(fromDir, fromName, toDir, toName)
	}
	if f := moveFailure(req, err); f != nil {
		return nil, f
	}
	e, err := b.inspect(toDir, toName)
	if err != nil {
		return nil, lastFailure(req.To, err)
	}
	return &written{path: to.clean, entry: &e}, nil
}

func moveFailure(req BrowseRequest, err error) *failure {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EEXIST) && !req.Overwrite:
		return fail(ReasonTargetExists, "path '%s' exists; move with overwrite to replace it", req.To)
	case errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return fail(ReasonDirNotEmpty, "directory '%s' is not empty, so it cannot be replaced", req.To)
	case errors.Is(err, syscall.EISDIR):
		return fail(ReasonTargetIsDirectory, "path '%s' is a directory; only a directory can replace it", req.To)
	case errors.Is(err, syscall.ENOTDIR):
		return fail(ReasonPathNotRegular, "path '%s' is not a directory; a directory cannot replace it", req.To)
	case errors.Is(err, syscall.ENOENT):
		return pathNotFound(req.Path)
	}
	return writeFailure(err, "failed to move '%s' to '%s': %s", req.Path, req.To, errno(err))
}

// lstatAt describes name in dirfd without following it: fstat of an O_PATH
// descriptor of the name, as inspect does.
func lstatAt(dirfd int, name string) (*syscall.Stat_t, error) {
	fd, err := openatRetry(dirfd, name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// parseMode reads a mode of four octal digits at most, permission bits
// only: a write never makes a set-user-ID file.
func parseMode(s string) (*uint32, *failure) {
	if s == "" {
		return nil, nil
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o777 || len(s) > 4 {
		return nil, fail(ReasonEnvInvalid, "mode %q is not permission bits in octal (0000 to 0777)", s)
	}
	mode := uint32(m)
	return &mode, nil
}

// etagOf is the ETag of a file: a digest of what changes when it is
// replaced, written, resized, or has its mode or owner changed.
func etagOf(st *syscall.Stat_t) string {
	var b [40]byte
	binary.LittleEndian.PutUint64(b[0:], st.Ino)
	binary.LittleEndian.PutUint64(b[8:], uint64(st.Size))
	binary.LittleEndian.PutUint64(b[16:], uint64(st.Mtim.Sec)<<30|uint64(st.Mtim.Nsec))
	binary.LittleEndian.PutUint64(b[24:], uint64(st.Ctim.Sec)<<30|uint64(st.Ctim.Nsec))
	binary.LittleEndian.PutUint64(b[32:], uint64(st.Mode))
	sum := sha256.Sum256(b[:])
	return hex.EncodeToString(sum[:8])
}
