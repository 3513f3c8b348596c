package sidecar

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"sort"
	"syscall"
	"time"
)

// entryKind is what an archive entry is.
type entryKind uint8

const (
	kindDir entryKind = iota + 1
	kindFile
	kindSymlink
	kindHardlink
	kindImplicit // a directory no entry names, only the paths below it
)

// packEntry is one file of a source tree, as the walk found it.
type packEntry struct {
	name     string // relative to the source, "/"-separated, no trailing "/"
	kind     entryKind
	perm     uint32 // permission and sticky bits; setuid and setgid are dropped
	uid, gid int
	mtime    time.Time
	size     int64
	target   string   // symlink
	file     *os.File // regular: open for reading, until the visit returns
	opened   fileState
	display  string // the entry's path in the volume, for messages
}

// keptModeBits are the mode bits an archive carries: permissions and the
// sticky bit. Setuid and setgid are dropped, so an archive never hands
// anyone a privilege.
const keptModeBits = 0o1777

// walker visits a source tree depth first, names sorted bytewise within
// each directory, so the same tree always packs to the same bytes. It never
// follows a symlink: every directory is opened relative to its parent's
// descriptor with O_NOFOLLOW, every file is first described through an
// O_PATH handle and opened only when regular.
type walker struct {
	visit func(e *packEntry) *failure
}

// walk visits everything below dir (not dir itself); display is dir's
// path in the volume.
func (w *walker) walk(dir *os.File, display string) *failure {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fail(ReasonSourceUnreadable, "failed to read source directory '%s': %s", display, errno(err))
	}
	sort.Strings(names)
	for _, name := range names {
		if f := w.entry(dir, display, "", name); f != nil {
			return f
		}
	}
	return nil
}

// entry visits prefix/name, found in dir (whose volume path is display),
// and everything below it.
func (w *walker) entry(dir *os.File, display, prefix, name string) *failure {
	rel := path.Join(prefix, name)
	shown := display + "/" + rel
	if f := packable(rel, name, shown); f != nil {
		return f
	}
	st, err := statAt(int(dir.Fd()), name)
	if err != nil {
		return walkError(shown, err)
	}
	e := &packEntry{name: rel, perm: st.Mode & keptModeBits, uid: int(st.Uid), gid: int(st.Gid),
		mtime: time.Unix(st.Mtim.Unix()), display: shown}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return w.dir(dir, display, e, name, &st)
	case syscall.S_IFREG:
		return w.file(dir, e, name, &st)
	case syscall.S_IFLNK:
		target, err := readLinkAt(int(dir.Fd()), name, make([]byte, syscall.PathMax))
		if err != nil {
			return walkError(shown, err)
		}
		e.kind, e.target = kindSymlink, target
		return w.visit(e)
	default:
		return fail(ReasonSourceNotRegular, "'%s' in the source directory is a %s, which an archive cannot hold; only regular files, directories and symlinks are packed",
			shown, specialKind(st.Mode))
	}
}

func (w *walker) dir(parent *os.File, display string, e *packEntry, name string, st *syscall.Stat_t) *failure {
	dir, err := openAt(int(parent.Fd()), name, syscall.O_DIRECTORY, st)
	if err != nil {
		return walkError(e.display, err)
	}
	defer dir.Close()
	e.kind = kindDir
	if f := w.visit(e); f != nil {
		return f
	}
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fail(ReasonSourceUnreadable, "failed to read source directory '%s': %s", e.display, errno(err))
	}
	sort.Strings(names)
	for _, child := range names {
		if f := w.entry(dir, display, e.name, child); f != nil {
			return f
		}
	}
	return nil
}

func (w *walker) file(dir *os.File, e *packEntry, name string, st *syscall.Stat_t) *failure {
	file, err := openAt(int(dir.Fd()), name, 0, st)
	if err != nil {
		return walkError(e.display, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return walkError(e.display, err)
	}
	e.kind, e.file, e.size, e.opened = kindFile, file, fi.Size(), stateOf(fi)
	if f := w.visit(e); f != nil {
		return f
	}
	now, err := file.Stat()
	if err != nil {
		return walkError(e.display, err)
	}
	if stateOf(now) != e.opened {
		return fail(ReasonSourceChanged, "the source file '%s' was modified while it was packed", e.display)
	}
	return nil
}

// walkError describes a file that could not be read, or that changed
// between being listed and being opened.
// packable refuses a name that unpack would refuse, so that cairn never
// stores an archive it cannot unpack itself.
func packable(rel, name, shown string) *failure {
	why := textProblem(rel)
	if why == "" && len(name) > maxNameComponent {
		why = "its name is longer than 255 bytes"
	}
	if why == "" {
		return nil
	}
	return fail(ReasonArchiveUnsafePath, "%s in the source directory cannot be packed: %s, which cairn refuses when it unpacks",
		quoteName(shown), why)
}

func walkError(shown string, err error) *failure {
	switch {
	case errors.Is(err, errReplaced), errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ELOOP),
		errors.Is(err, syscall.ENOTDIR):
		return fail(ReasonSourceChanged, "'%s' was replaced or removed while the source was packed", shown)
	}
	return fail(ReasonSourceUnreadable, "failed to read '%s' in the source directory: %s", shown, errno(err))
}

func specialKind(mode uint32) string {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFIFO:
		return "named pipe (FIFO)"
	case syscall.S_IFSOCK:
		return "socket"
	case syscall.S_IFCHR:
		return "character device"
	case syscall.S_IFBLK:
		return "block device"
	}
	return "special file"
}
