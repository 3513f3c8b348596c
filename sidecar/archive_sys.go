package sidecar

import (
	"errors"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// Flags package syscall does not export on every architecture; their
// values are the same on each Linux one this builds for (amd64, arm64).
const (
	oPath             = 0x200000 // O_PATH: a handle that opens nothing, not even a device
	atSymlinkNoFollow = 0x100    // AT_SYMLINK_NOFOLLOW
	renameNoReplace   = 0x1      // RENAME_NOREPLACE
	renameExchange    = 0x2      // RENAME_EXCHANGE
	atRemoveDir       = 0x200    // AT_REMOVEDIR
)

// errNoReplaceUnsupported reports a filesystem without RENAME_NOREPLACE.
var errNoReplaceUnsupported = errors.New("rename without replace is not supported here")

// renameExclusive renames oldName in oldDir to newName in newDir, refusing
// with EEXIST when newName exists, in one atomic step.
func renameExclusive(oldDir int, oldName string, newDir int, newName string) error {
	err := renameat2(oldDir, oldName, newDir, newName, renameNoReplace)
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSYS) {
		return errNoReplaceUnsupported
	}
	return err
}

// renameat2 is renameat2(2), which package syscall does not offer.
func renameat2(oldDir int, oldName string, newDir int, newName string, flags uintptr) error {
	oldp, err := syscall.BytePtrFromString(oldName)
	if err != nil {
		return err
	}
	newp, err := syscall.BytePtrFromString(newName)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall6(sysRenameat2, uintptr(oldDir), uintptr(unsafe.Pointer(oldp)),
		uintptr(newDir), uintptr(unsafe.Pointer(newp)), flags, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// removeAt is unlinkat(2) with its flags, which package syscall's Unlinkat
// does not take: atRemoveDir removes an empty directory.
func removeAt(dirfd int, name string, flags uintptr) error {
	p, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	_, _, errno := syscall.Syscall(syscall.SYS_UNLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(p)), flags)
	if errno != 0 {
		return errno
	}
	return nil
}

// setTimes sets the access and modification times of name in dirfd, or of
// dirfd itself when name is "", never following a symlink.
func setTimes(dirfd int, name string, mtime time.Time) error {
	ts := [2]syscall.Timespec{syscall.NsecToTimespec(mtime.UnixNano()), syscall.NsecToTimespec(mtime.UnixNano())}
	var namep *byte // nil: utimensat(2) then acts on dirfd, like futimens(3)
	flags := 0
	if name != "" {
		p, err := syscall.BytePtrFromString(name)
		if err != nil {
			return err
		}
		namep, flags = p, atSymlinkNoFollow
	}
	_, _, errno := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(dirfd), uintptr(unsafe.Pointer(namep)),
		uintptr(unsafe.Pointer(&ts[0])), uintptr(flags), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// readLinkAt reads the target of the symlink name in dirfd into buf, at
// most len(buf) bytes. An empty name reads the link that dirfd itself is
// (an O_PATH descriptor of it); syscall exports no readlinkat.
func readLinkAt(dirfd int, name string, buf []byte) (string, error) {
	namep, err := syscall.BytePtrFromString(name)
	if err != nil {
		return "", err
	}
	n, _, errno := syscall.Syscall6(syscall.SYS_READLINKAT, uintptr(dirfd), uintptr(unsafe.Pointer(namep)),
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)), 0, 0)
	if errno != 0 {
		return "", errno
	}
	return string(buf[:n]), nil
}

// statAt describes name in dirfd without following it and without opening
// it for I/O (an O_PATH handle), so a device or FIFO is never opened.
func statAt(dirfd int, name string) (syscall.Stat_t, error) {
	var st syscall.Stat_t
	fd, err := syscall.Openat(dirfd, name, oPath|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return st, err
	}
	defer syscall.Close(fd)
	err = syscall.Fstat(fd, &st)
	return st, err
}

// openAt opens name in dirfd for reading, never through a symlink and never
// blocking on a FIFO, and checks it is still the file statAt described.
func openAt(dirfd int, name string, flags int, want *syscall.Stat_t) (*os.File, error) {
	fd, err := syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC|flags, 0)
	if err != nil {
		return nil, err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if st.Dev != want.Dev || st.Ino != want.Ino {
		syscall.Close(fd)
		return nil, errReplaced
	}
	return os.NewFile(uintptr(fd), name), nil
}

// errReplaced marks a file replaced between being listed and opened.
var errReplaced = errors.New("replaced while packed")
