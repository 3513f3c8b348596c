package sidecar

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"syscall"
	"time"
)

// stagingPrefix starts the name of the directory an unpack writes into,
// beside its target.
const stagingPrefix = ".cairn-unpack-"

// stagingMode is the staging directory's mode while it is written: no one
// else may look in until the tree is complete.
const stagingMode = 0o700

// openMode is the mode of what the archive says nothing about: the target
// directory when the archive has no root entry, and directories named only
// by the paths below them. 0777, like the volume root that prep makes, so
// tool containers of any UID can use them.
const openMode = 0o777

// entryMeta is what an entry says about itself besides its bytes.
type entryMeta struct {
	perm     uint32 // permission and sticky bits
	uid, gid int
	owned    bool // uid and gid come from the archive
	mtime    time.Time
}

// stage is the fresh directory an unpack writes into, beside the target
// and renamed into place at the end; abort removes it, so a failed unpack
// leaves nothing. Every write goes through an os.Root of it, so no link
// the tree holds can lead a write out, and files are created O_EXCL.
//
// Ownership: every entry gets the numeric owner the archive gives it,
// through chown (the unpack container has CAP_CHOWN); what the archive
// gives no owner (a zip entry without an Info-ZIP Unix field, a directory
// only implied by paths, the target without a root entry) gets the owner
// of the target's parent. A chown that fails fails the unpack
// (write_failed): a tree with other owners than the archive says is not
// the archive's tree, and is found out only when a tool cannot write.
type stage struct {
	parent    *os.Root
	parentDir *os.File
	name      string
	root      *os.Root
	owner     entryMeta // the parent's owner, for what the archive leaves unowned
	dirs      map[string]*entryMeta
	top       *entryMeta
	buf       []byte
	// born is the owner the kernel gives what the unpack creates, when the
	// staging directory shows it: the process's own IDs, no set-group-ID
	// parent or mount option giving it another group. An entry the
	// archive gives that owner already has it, and needs no chown.
	born *[2]int
	// at is the directory the last file was created in, kept open: the
	// entries of a directory come together, so one walk of the root
	// serves them all.
	at     *os.File
	atName string
}

func newStage(parent *os.Root, parentDir *os.File, display string) (*stage, *failure) {
	fi, err := parentDir.Stat()
	if err != nil {
		return nil, fail(ReasonWriteFailed, "cannot read the directory '%s': %s", display, errno(err))
	}
	st := fi.Sys().(*syscall.Stat_t)
	s := &stage{parent: parent, parentDir: parentDir, dirs: map[string]*entryMeta{},
		owner: entryMeta{uid: int(st.Uid), gid: int(st.Gid), owned: true}, buf: make([]byte, copyBuffer)}
	var random [8]byte
	_, _ = rand.Read(random[:]) // never fails on Linux
	s.name = stagingPrefix + hex.EncodeToString(random[:])
	if err := parent.Mkdir(s.name, stagingMode); err != nil {
		return nil, writeFailure(err, "cannot create a directory in '%s' to unpack into: %s", display, errno(err))
	}
	if s.root, err = parent.OpenRoot(s.name); err != nil {
		_ = parent.Remove(s.name)
		return nil, fail(ReasonWriteFailed, "cannot open the directory unpacked into: %s", errno(err))
	}
	s.born = bornOwner(s.root)
	return s, nil
}

// bornOwner is the owner of what is created in root, if root itself shows
// it: the effective IDs the kernel gives a new file. A set-group-ID
// directory (inherited by every directory below it) or a mount option can
// give a new file its directory's group instead; the staging directory's
// own group shows that, and then nil keeps every chown.
func bornOwner(root *os.Root) *[2]int {
	fi, err := root.Stat(".")
	if err != nil {
		return nil
	}
	st := fi.Sys().(*syscall.Stat_t)
	uid, gid := os.Geteuid(), os.Getegid()
	if int(st.Uid) != uid || int(st.Gid) != gid {
		return nil
	}
	return &[2]int{uid, gid}
}

func writeFailed(name string, err error) *failure {
	return writeFailure(err, "failed to unpack %s: %s", quoteName(name), errno(err))
}

// mkdirs creates directories the archive implies (parents of later
// entries), outermost first.
func (s *stage) mkdirs(names []string) *failure {
	for _, n := range names {
		if err := s.root.Mkdir(n, stagingMode); err != nil {
			return writeFailed(n, err)
		}
		s.dirs[n] = nil
	}
	return nil
}

// dir creates a directory entry, or adopts the one its children implied;
// its metadata is set at the end, once nothing more is written into it.
func (s *stage) dir(name string, meta entryMeta) *failure {
	if name == "." {
		s.top = &meta
		return nil
	}
	if _, implied := s.dirs[name]; !implied {
		if err := s.root.Mkdir(name, stagingMode); err != nil {
			return writeFailed(name, err)
		}
	}
	s.dirs[name] = &meta
	return nil
}

// file writes a regular file from r. A failure to write is write_failed;
// an error reading r comes back as readErr, for the caller to judge.
func (s *stage) file(name string, meta entryMeta, r io.Reader) (f *failure, readErr error) {
	out, err := s.create(name)
	if err != nil {
		return writeFailed(name, err), nil
	}
	defer out.Close()
	in := &readRecorder{r: fullReads{r}}
	if _, err := io.CopyBuffer(writerOnly{out}, in, s.buf); err != nil {
		if in.err != nil {
			return nil, in.err
		}
		return writeFailed(name, err), nil
	}
	if err := s.settle(out, meta); err != nil {
		return writeFailed(name, err), nil
	}
	if err := out.Close(); err != nil {
		return writeFailed(name, err), nil
	}
	return nil, nil
}

// fullReads fills each buffer it is given unless the reader ends or fails
// first: an inflater yields 32 KiB at a time, and a file is written in as
// few calls as the copy buffer allows.
type fullReads struct{ r io.Reader }

func (f fullReads) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := f.r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// create creates the regular file name, empty, for writing, O_EXCL and
// O_NOFOLLOW as the root would. The descriptor stays blocking and out of
// the poller: a regular file gains nothing there, and os.OpenFile's
// attempt to add it costs five system calls.
func (s *stage) create(name string) (*os.File, error) {
	dirfd, base, err := s.dirOf(name)
	if err != nil {
		return nil, err
	}
	fd, err := openatRetrying(dirfd, base, syscall.O_WRONLY|syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// dirOf returns the directory holding name, opened through the root (a
// walk that no link can lead out of), and name's last element. It keeps
// the directory open for the next entry: the entries of a directory come
// together, so one walk serves them all.
func (s *stage) dirOf(name string) (dirfd int, base string, err error) {
	dir, base := path.Split(name)
	dir = path.Clean(dir) // "." for an entry at the top
	if s.at == nil || s.atName != dir {
		s.closeAt()
		at, err := s.root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
		if err != nil {
			return 0, "", err
		}
		s.at, s.atName = at, dir
	}
	return int(s.at.Fd()), base, nil
}

// openatRetrying is openat(2), retried when a signal interrupts it, as
// package os does.
func openatRetrying(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := syscall.Openat(dirfd, name, flags, mode)
		if !errors.Is(err, syscall.EINTR) {
			return fd, err
		}
	}
}

// closeAt closes the directory kept open for creating files.
func (s *stage) closeAt() {
	if s.at != nil {
		_ = s.at.Close() // a directory opened for reading has nothing to flush
		s.at, s.atName = nil, ""
	}
}

// settle gives an open file or directory its mode, mtime and owner, in
// that order: the chown comes last, so the rest needs no CAP_FOWNER.
func (s *stage) settle(f *os.File, meta entryMeta) error {
	if err := f.Chmod(fileMode(meta.perm)); err != nil {
		return err
	}
	if !meta.mtime.IsZero() {
		if err := setTimes(int(f.Fd()), "", meta.mtime); err != nil {
			return err
		}
	}
	uid, gid, ok := s.chownTo(meta)
	if !ok {
		return nil
	}
	return f.Chown(uid, gid)
}

func (s *stage) ownerOf(meta entryMeta) (int, int) {
	if meta.owned {
		return meta.uid, meta.gid
	}
	return s.owner.uid, s.owner.gid
}

// chownTo is the owner to give what the unpack created for meta, or false
// when it was born with that owner.
func (s *stage) chownTo(meta entryMeta) (uid, gid int, ok bool) {
	uid, gid = s.ownerOf(meta)
	if s.born != nil && *s.born == [2]int{uid, gid} {
		return 0, 0, false
	}
	return uid, gid, true
}

// fileMode turns permission and sticky bits into an fs.FileMode.
func fileMode(perm uint32) fs.FileMode {
	m := fs.FileMode(perm & 0o777)
	if perm&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// symlink creates a symlink (its target was checked) with its owner and
// mtime; a symlink's mode means nothing on Linux.
func (s *stage) symlink(name, target string, meta entryMeta) *failure {
	if err := s.root.Symlink(target, name); err != nil {
		return writeFailed(name, err)
	}
	dirfd, base, err := s.dirOf(name)
	if err != nil {
		return writeFailed(name, err)
	}
	if uid, gid, ok := s.chownTo(meta); ok {
		if err := syscall.Fchownat(dirfd, base, uid, gid, atSymlinkNoFollow); err != nil {
			return writeFailed(name, err)
		}
	}
	if meta.mtime.IsZero() {
		return nil
	}
	if err := setTimes(dirfd, base, meta.mtime); err != nil {
		return writeFailed(name, err)
	}
	return nil
}

// hardlink links name to the earlier regular file old.
func (s *stage) hardlink(name, old string) *failure {
	if err := s.root.Link(old, name); err != nil {
		return writeFailed(name, err)
	}
	return nil
}

// finish sets the directories' metadata deepest first, so that no later
// change inside one moves its mtime, and the staging directory's last: the
// archive root's mode, owner and mtime, or openMode and the parent's owner.
func (s *stage) finish() *failure {
	s.closeAt()
	names := make([]string, 0, len(s.dirs))
	for n := range s.dirs {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		di, dj := strings.Count(names[i], "/"), strings.Count(names[j], "/")
		return di > dj || (di == dj && names[i] < names[j])
	})
	for _, n := range names {
		if f := s.settleDir(n, s.dirs[n]); f != nil {
			return f
		}
	}
	return s.settleDir(".", s.top)
}

func (s *stage) settleDir(name string, meta *entryMeta) *failure {
	if meta == nil {
		meta = &entryMeta{perm: openMode}
	}
	dir, err := s.root.OpenFile(name, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return writeFailed(name, err)
	}
	defer dir.Close()
	if err := s.settle(dir, *meta); err != nil {
		return writeFailed(name, err)
	}
	return nil
}

// commit renames the staging directory to base, refusing atomically if
// base exists by then.
func (s *stage) commit(base, display string) *failure {
	err := renameExclusive(int(s.parentDir.Fd()), s.name, int(s.parentDir.Fd()), base)
	if errors.Is(err, errNoReplaceUnsupported) {
		err = s.renameOntoEmpty(base)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EEXIST), errors.Is(err, syscall.ENOTEMPTY):
		return targetExists(display)
	}
	return writeFailure(err, "failed to move the unpacked tree to '%s': %s", display, errno(err))
}

// renameOntoEmpty is the exclusive rename where the filesystem has no
// RENAME_NOREPLACE: mkdir claims base atomically, and a rename replaces
// only an empty directory, so anything put there meanwhile wins.
func (s *stage) renameOntoEmpty(base string) error {
	if err := s.parent.Mkdir(base, stagingMode); err != nil {
		return err
	}
	err := syscall.Renameat(int(s.parentDir.Fd()), s.name, int(s.parentDir.Fd()), base)
	if err != nil && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		_ = s.parent.Remove(base) // our own empty claim
	}
	return err
}

func targetExists(display string) *failure {
	return fail(ReasonTargetExists, "the target '%s' already exists; unpack creates a new directory", display)
}

// abort removes the staging directory and everything in it. A directory
// whose archive mode forbids writing is opened up first, for a container
// without CAP_DAC_OVERRIDE.
func (s *stage) abort() {
	s.closeAt()
	s.root.Close()
	if s.parent.RemoveAll(s.name) == nil {
		return
	}
	_ = fs.WalkDir(s.parent.FS(), s.name, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = s.parent.Chmod(p, stagingMode)
		}
		return nil
	})
	_ = s.parent.RemoveAll(s.name)
}

// close releases the staging root after a commit.
func (s *stage) close() {
	s.closeAt()
	s.root.Close()
}
