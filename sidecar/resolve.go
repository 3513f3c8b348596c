package sidecar

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Failure reasons of the path and file checks.
const (
	ReasonPathIsMountRoot   = "path_is_mount_root"
	ReasonSourceNotFound    = "source_not_found"
	ReasonSourceIsDirectory = "source_is_directory"
	ReasonSourceNotRegular  = "source_not_regular"
	ReasonSourceUnreadable  = "source_unreadable"
	ReasonTargetDirMissing  = "target_dir_missing"
	ReasonTargetIsDirectory = "target_is_directory"
	ReasonWriteFailed       = "write_failed"
	ReasonVolumeFull        = "volume_full"
)

// failure is a command's refusal: a reason and a message for the caller.
type failure struct {
	reason  string
	message string
}

func (f *failure) Error() string { return f.message }

func fail(reason, format string, args ...any) *failure {
	return &failure{reason: reason, message: fmt.Sprintf(format, args...)}
}

// writeFailure is the failure of a write into the volume that err ended:
// volume_full when the filesystem, or the writer's quota on it, has no
// room left (a caller can free space and retry), write_failed otherwise.
func writeFailure(err error, format string, args ...any) *failure {
	reason := ReasonWriteFailed
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		reason = ReasonVolumeFull
	}
	return fail(reason, format, args...)
}

// mount is the workspace volume: the path the caller knows it by and the
// path it really is (symlinks resolved), plus an os.Root that refuses any
// open escaping it, whatever a concurrent writer does to the tree.
type mount struct {
	path string
	real string
	root *os.Root
}

func openMount(path string) (*mount, *failure) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fail(ReasonEnvInvalid, "the mount root %s cannot be resolved: %v", path, describe(err))
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fail(ReasonEnvInvalid, "the mount root %s cannot be opened: %v", path, describe(err))
	}
	return &mount{path: path, real: real, root: root}, nil
}

func (m *mount) close() { m.root.Close() }

// rel returns resolved relative to the real mount root, or false when it is
// outside (a component-wise test: <mount>X is outside).
func (m *mount) rel(resolved string) (string, bool) {
	if resolved == m.real {
		return ".", true
	}
	rest, ok := strings.CutPrefix(resolved, m.real+string(filepath.Separator))
	return rest, ok
}

// display maps a resolved path back under the mount path callers use.
func (m *mount) display(rel string) string {
	if rel == "." {
		return m.path
	}
	return filepath.Join(m.path, rel)
}

func (m *mount) outside(p, resolved string) *failure {
	return fail(ReasonPathOutsideMount, "path '%s' resolves to '%s', which is outside the workspace volume mounted at '%s'",
		p, resolved, m.path)
}

// resolveSource follows every symlink of a source path and judges the
// target: it must exist inside the mount and be a regular file. It returns
// the path relative to the mount root.
func (m *mount) resolveSource(p string) (string, *failure) {
	if !filepath.IsAbs(p) {
		return "", fail(ReasonPathOutsideMount, "path '%s' must be absolute, and within the workspace volume mounted at '%s'", p, m.path)
	}
	resolved, exists, err := resolvePath(p)
	if err != nil {
		return "", fail(ReasonSourceUnreadable, "failed to read source file '%s': %v", p, describe(err))
	}
	rel, ok := m.rel(resolved)
	if !ok {
		return "", fail(ReasonPathOutsideMount, "source path resolves to '%s', which is outside the workspace volume mounted at '%s'",
			resolved, m.path)
	}
	if !exists {
		return "", fail(ReasonSourceNotFound, "source file '%s' does not exist", p)
	}
	return rel, nil
}

// openSource opens a resolved source through the root and checks that it is
// a regular file. O_NONBLOCK makes opening a FIFO return at once instead of
// waiting for a writer; it changes nothing for a regular file.
func (m *mount) openSource(p, rel string) (*os.File, fs.FileInfo, *failure) {
	f, err := m.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, m.openError(p, rel, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fail(ReasonSourceUnreadable, "failed to read source file '%s': %v", p, describe(err))
	}
	if fl := notRegular(p, fi); fl != nil {
		f.Close()
		return nil, nil, fl
	}
	return f, fi, nil
}

// notRegular refuses a directory or any other file that is not regular.
func notRegular(p string, fi fs.FileInfo) *failure {
	switch {
	case fi.IsDir():
		return fail(ReasonSourceIsDirectory, "source path '%s' is a directory, not a single uploadable file", p)
	case !fi.Mode().IsRegular():
		return fail(ReasonSourceNotRegular, "source path '%s' is not a regular file", p)
	}
	return nil
}

func (m *mount) openError(p, rel string, err error) *failure {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(ReasonSourceNotFound, "source file '%s' does not exist", p)
	case isEscape(err):
		return fail(ReasonPathOutsideMount, "path '%s' leads outside the workspace volume mounted at '%s'", p, m.path)
	}
	// Some files cannot be opened at all (a socket answers ENXIO): judge
	// them by their type before calling them unreadable.
	if fi, serr := m.root.Stat(rel); serr == nil {
		if f := notRegular(p, fi); f != nil {
			return f
		}
	}
	return fail(ReasonSourceUnreadable, "failed to read source file '%s': %v", p, describe(err))
}

// isEscape reports os.Root refusing a path that leaves it.
func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
