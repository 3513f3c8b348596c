package sidecar

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// download fetches the object first (a refused download must not truncate
// an existing file), then writes it to the target, whose parent directory
// must already exist inside the mount.
func download(env Env) Result {
	root, bad := mountRoot(env)
	if bad != nil {
		return *bad
	}
	vals, f := requireEnv(env, EnvTargetPath, EnvURL)
	if f != nil {
		return failed(f, 0)
	}
	target := vals[EnvTargetPath]
	m, f := openMount(root)
	if f != nil {
		return failed(f, 0)
	}
	defer m.close()
	parentRel, base, f := m.resolveTarget(target)
	if f != nil {
		return failed(f, 0)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, vals[EnvURL], nil)
	if err != nil {
		return failed(fail(ReasonEnvInvalid, "%s is not a valid URL", EnvURL), 0)
	}
	resp, err := httpClient().Do(req)
	if err != nil {
		return failed(unreachable("download", err), 0)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return failed(statusFailure(resp.StatusCode, "download"), resp.StatusCode)
	}
	body := &bodyReader{r: resp.Body}
	n, f := m.writeTarget(target, parentRel, base, body)
	if body.err != nil {
		return failed(brokeOff(body.err), 0)
	}
	if f != nil {
		return failed(f, 0)
	}
	return Result{OK: true, DownloadedPath: m.display(filepath.Join(parentRel, base)), Size: &n}
}

// resolveTarget resolves only the target's parent directory: the final
// component is left alone, so a symlink there is replaced, not followed.
func (m *mount) resolveTarget(p string) (parentRel, base string, f *failure) {
	if !filepath.IsAbs(p) {
		return "", "", fail(ReasonPathOutsideMount, "path '%s' must be absolute, and within the workspace volume mounted at '%s'", p, m.path)
	}
	if filepath.Clean(p) == m.path {
		return "", "", fail(ReasonPathIsMountRoot, "destination path '%s' is the workspace volume mount point itself, not a file to write", p)
	}
	// A trailing slash names a directory (open(2) says EISDIR);
	// filepath.Base would drop it and write a file of that name inside.
	if strings.HasSuffix(p, "/") {
		return "", "", fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
	}
	// Split the path as written: cleaning it first would fold a ".." that
	// follows a symlink the way the filesystem does not.
	cut := strings.LastIndex(p, "/")
	parent, base := p[:cut], p[cut+1:]
	resolved, exists, err := resolvePath(parent)
	if err != nil {
		return "", "", fail(ReasonTargetDirMissing, "destination directory '%s' cannot be resolved: %v", parent, describe(err))
	}
	rel, ok := m.rel(resolved)
	if !ok {
		return "", "", m.outside(p, filepath.Join(resolved, base))
	}
	if !exists {
		return "", "", fail(ReasonTargetDirMissing, "destination directory '%s' does not exist; create it before downloading into it", parent)
	}
	if rel == "." && (base == "." || base == "..") {
		return "", "", fail(ReasonPathIsMountRoot, "destination path '%s' is the workspace volume mount point itself, not a file to write", p)
	}
	return rel, base, nil
}

// writeTarget opens the target inside its (contained) parent directory with
// O_NOFOLLOW and streams body into it. A new file is mode 0666 whatever the
// umask, so tool containers of any UID can rewrite it; an existing regular
// file keeps its owner and mode; a symlink is unlinked and replaced.
func (m *mount) writeTarget(p, parentRel, base string, body io.Reader) (int64, *failure) {
	// O_DIRECTORY: a FIFO in the parent's place fails at once instead of
	// blocking the open.
	dir, err := m.root.OpenFile(parentRel, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		if isEscape(err) {
			return 0, fail(ReasonPathOutsideMount, "path '%s' leads outside the workspace volume mounted at '%s'", p, m.path)
		}
		return 0, fail(ReasonTargetDirMissing, "destination directory '%s' does not exist; create it before downloading into it", filepath.Dir(p))
	}
	defer dir.Close()
	file, f := openTarget(int(dir.Fd()), p, base, filepath.Join(m.real, parentRel, base))
	if f != nil {
		return 0, f
	}
	defer file.Close()
	n, err := io.CopyBuffer(file, body, make([]byte, chunk))
	if err == nil {
		err = file.Close()
	}
	if err != nil {
		return n, fail(ReasonWriteFailed, "failed to write destination file '%s': %s", p, errno(err))
	}
	return n, nil
}

// bodyReader remembers a failure of the response body, so that a download
// the store breaks off is reported as the store's failure, not as a write
// error.
type bodyReader struct {
	r   io.Reader
	err error
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// brokeOff describes a body that failed midway by its kind only, like
// unreachable.
func brokeOff(err error) *failure {
	return fail(ReasonStoreUnreachable, "the download from the object store broke off: %s", networkKind(err))
}

// openTarget creates or truncates base in the directory dirfd, never
// through a symlink. A few rounds cover a symlink being replaced.
// real is the target's path on this side of the mount, used only to tell
// what a symlink there points at.
func openTarget(dirfd int, p, base, real string) (*os.File, *failure) {
	const flags = syscall.O_WRONLY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC | syscall.O_NONBLOCK
	for range 3 {
		fd, err := syscall.Openat(dirfd, base, flags|syscall.O_CREAT|syscall.O_EXCL, 0o666)
		if err == nil {
			if err := syscall.Fchmod(fd, 0o666); err != nil {
				syscall.Close(fd)
				return nil, fail(ReasonWriteFailed, "failed to write destination file '%s': %v", p, err)
			}
			return os.NewFile(uintptr(fd), p), nil
		}
		if !errors.Is(err, syscall.EEXIST) {
			return nil, targetError(p, err)
		}
		fd, err = syscall.Openat(dirfd, base, flags|syscall.O_TRUNC, 0)
		switch {
		case err == nil:
			return regularTarget(fd, p)
		case errors.Is(err, syscall.ELOOP):
			if f := replaceSymlink(dirfd, p, base, real); f != nil {
				return nil, f
			}
		default:
			return nil, targetError(p, err)
		}
	}
	return nil, fail(ReasonWriteFailed, "failed to write destination file '%s': it keeps changing", p)
}

// regularTarget refuses anything but a regular file (a FIFO or device
// opened without blocking).
func regularTarget(fd int, p string) (*os.File, *failure) {
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		syscall.Close(fd)
		return nil, fail(ReasonWriteFailed, "failed to write destination file '%s': it is not a regular file", p)
	}
	return os.NewFile(uintptr(fd), p), nil
}

// replaceSymlink unlinks the symlink at base, unless it leads to a
// directory, which is refused like a directory.
func replaceSymlink(dirfd int, p, base, real string) *failure {
	if fi, err := os.Stat(real); err == nil && fi.IsDir() {
		return fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
	}
	if err := syscall.Unlinkat(dirfd, base); err != nil && !errors.Is(err, syscall.ENOENT) {
		return fail(ReasonWriteFailed, "failed to write destination file '%s': %v", p, err)
	}
	return nil
}

func targetError(p string, err error) *failure {
	switch {
	case errors.Is(err, syscall.EISDIR):
		return fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fail(ReasonTargetDirMissing, "destination directory '%s' does not exist; create it before downloading into it", filepath.Dir(p))
	default:
		return fail(ReasonWriteFailed, "failed to write destination file '%s': %v", p, err)
	}
}
