package sidecar

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
// must already exist inside the mount. Asked to (CAIRN_PROGRESS), it
// reports its progress over in and out as it goes.
func download(env Env, in io.Reader, out io.Writer) Result {
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
	p := startProgress(env, newConversation(in, out), max(resp.ContentLength, 0))
	body := &bodyReader{r: p.reader(resp.Body)}
	n, f := m.writeTarget(target, parentRel, base, body)
	p.end()
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

// writeTarget streams body into a fresh temporary file beside the target,
// inside its (contained) parent directory, and renames it over the target
// only once every byte is written and flushed: a download that fails
// midway — the store gone, the volume full — leaves the target as it was
// and nothing beside it. A new file is mode 0666 whatever the umask, so
// tool containers of any UID can rewrite it; an existing regular file is
// replaced by one with its owner and mode (its other hard links keep the
// old bytes); a symlink is replaced, never followed.
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
	dirfd := int(dir.Fd())
	keep, f := m.existingTarget(p, filepath.Join(parentRel, base))
	if f != nil {
		return 0, f
	}
	file, temp, f := createTemp(dirfd, p)
	if f != nil {
		return 0, f
	}
	n, f := fill(file, body, p, keep)
	if f == nil {
		f = replace(dirfd, temp, base, p)
	}
	if f != nil {
		_ = syscall.Unlinkat(dirfd, temp) // the failure is the one to report
		return n, f
	}
	return n, nil
}

// loadPrefix starts the name of the temporary file a download writes
// beside its target.
const loadPrefix = ".cairn-load-"

// existingTarget looks at what the target's name holds now, without
// following a symlink: the owner and mode a regular file there hands on to
// its replacement, nil for nothing (or a symlink, which is replaced like
// nothing), or the refusal of a directory or a special file.
func (m *mount) existingTarget(p, rel string) (*syscall.Stat_t, *failure) {
	fi, err := m.root.Lstat(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, targetError(p, err)
	}
	switch mode := fi.Mode(); {
	case mode.IsRegular():
		return fi.Sys().(*syscall.Stat_t), nil
	case mode.IsDir():
		return nil, fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
	case mode&fs.ModeSymlink != 0:
		// Only to tell a link to a directory: the link itself is replaced.
		if fi, err := os.Stat(filepath.Join(m.real, rel)); err == nil && fi.IsDir() {
			return nil, fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
		}
		return nil, nil
	}
	return nil, fail(ReasonWriteFailed, "failed to write destination file '%s': it is not a regular file", p)
}

// createTemp creates the temporary file, private until it is complete.
func createTemp(dirfd int, p string) (*os.File, string, *failure) {
	var random [8]byte
	_, _ = rand.Read(random[:]) // never fails on Linux
	name := loadPrefix + hex.EncodeToString(random[:])
	const flags = syscall.O_WRONLY | syscall.O_CREAT | syscall.O_EXCL | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	fd, err := syscall.Openat(dirfd, name, flags, 0o600)
	if err != nil {
		return nil, "", writeFailure(err, "failed to write destination file '%s': %v", p, err)
	}
	return os.NewFile(uintptr(fd), p), name, nil
}

// fill copies body into file, gives it the mode and owner it will have
// (keep's, or 0666 and the sidecar's user) and flushes it to disk, so
// that the rename publishes only bytes that are there. The chmod comes
// before the chown, so it needs no CAP_FOWNER.
func fill(file *os.File, body io.Reader, p string, keep *syscall.Stat_t) (int64, *failure) {
	defer file.Close()
	n, err := io.CopyBuffer(file, body, make([]byte, chunk))
	if err == nil {
		err = settleTarget(file, keep)
	}
	if err == nil {
		err = file.Sync()
	}
	if err == nil {
		err = file.Close()
	}
	if err != nil {
		return n, writeFailure(err, "failed to write destination file '%s': %s", p, errno(err))
	}
	return n, nil
}

func settleTarget(file *os.File, keep *syscall.Stat_t) error {
	if keep == nil {
		return file.Chmod(0o666)
	}
	if err := file.Chmod(fs.FileMode(keep.Mode & 0o777)); err != nil {
		return err
	}
	return file.Chown(int(keep.Uid), int(keep.Gid))
}

// replace renames the complete temporary file over the target.
func replace(dirfd int, temp, base, p string) *failure {
	err := syscall.Renameat(dirfd, temp, dirfd, base)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.ENOTEMPTY), errors.Is(err, syscall.EEXIST):
		return fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
	}
	return writeFailure(err, "failed to write destination file '%s': %v", p, err)
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

func targetError(p string, err error) *failure {
	switch {
	case errors.Is(err, syscall.EISDIR):
		return fail(ReasonTargetIsDirectory, "destination path '%s' is a directory, not a file to write", p)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return fail(ReasonTargetDirMissing, "destination directory '%s' does not exist; create it before downloading into it", filepath.Dir(p))
	default:
		return writeFailure(err, "failed to write destination file '%s': %v", p, err)
	}
}
