package sidecar

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Defaults of an unpack's bounds.
const (
	defaultMaxEntries = 10000
	defaultMaxBytes   = 10 << 30
	defaultMaxRatio   = 200
)

// unpack unpacks the archive at CAIRN_URL into the new directory
// CAIRN_TARGET_PATH, whose parent must exist inside the mount. It writes
// into a fresh directory beside the target and renames it into place only
// once every entry was judged safe and written, refusing atomically if the
// target appeared meanwhile; on any failure the staging directory is
// removed, so the target is never created half-unpacked. Reasons:
// target_dir_missing, target_exists, archive_unsafe_path,
// archive_too_large, archive_ratio, archive_invalid, the store's, and
// write_failed. Asked to (CAIRN_PROGRESS), it reports the archive's bytes
// fetched over in and out as it goes.
func unpack(env Env, in io.Reader, out io.Writer) Result {
	root, bad := mountRoot(env)
	if bad != nil {
		return *bad
	}
	job, f := unpackJobOf(env)
	if f != nil {
		return failed(f, 0)
	}
	m, f := openMount(root)
	if f != nil {
		return failed(f, 0)
	}
	defer m.close()
	parentRel, base, f := m.resolveNewDir(job.target)
	if f != nil {
		return failed(f, 0)
	}
	display := m.display(filepath.Join(parentRel, base))
	parent, parentDir, f := m.openNewDirParent(job.target, parentRel, base, display)
	if f != nil {
		return failed(f, 0)
	}
	defer parent.Close()
	defer parentDir.Close()
	st, f := newStage(parent, parentDir, m.display(parentRel))
	if f != nil {
		return failed(f, 0)
	}
	p := startProgress(env, newConversation(in, out), job.lim.size)
	u := &unpacker{format: job.format, st: st, t: newTree(), b: budget{lim: job.lim}, want: job.want,
		client: p.client(httpClient())}
	status, f := u.run(job.url)
	p.end()
	if f == nil {
		f = st.finish()
	}
	if f == nil {
		f = st.commit(base, display)
	}
	if f != nil {
		st.abort()
		return failed(f, status)
	}
	st.close()
	size := u.b.written
	return Result{OK: true, UnpackedPath: display, Entries: u.b.entries, Size: &size}
}

// unpackJob is one unpack's input.
type unpackJob struct {
	target, url, format string
	lim                 limits
	want                []byte // the archive's recorded SHA-256, if given
}

func unpackJobOf(env Env) (unpackJob, *failure) {
	vals, f := requireEnv(env, EnvTargetPath, EnvURL, EnvFormat, EnvMaxSize)
	if f != nil {
		return unpackJob{}, f
	}
	job := unpackJob{target: vals[EnvTargetPath], url: vals[EnvURL], format: vals[EnvFormat]}
	if job.format != FormatTarGz && job.format != FormatZip {
		return unpackJob{}, fail(ReasonEnvInvalid, "%s must be %s or %s", EnvFormat, FormatTarGz, FormatZip)
	}
	var err error
	if job.lim.size, err = strconv.ParseInt(vals[EnvMaxSize], 10, 64); err != nil || job.lim.size < 0 {
		return unpackJob{}, fail(ReasonEnvInvalid, "%s must be a non-negative decimal integer", EnvMaxSize)
	}
	entries, f := positive(env, EnvMaxEntries, defaultMaxEntries)
	if f != nil {
		return unpackJob{}, f
	}
	job.lim.entries = int(entries)
	if job.lim.bytes, f = positive(env, EnvMaxBytes, defaultMaxBytes); f != nil {
		return unpackJob{}, f
	}
	if job.lim.ratio, f = positive(env, EnvMaxRatio, defaultMaxRatio); f != nil {
		return unpackJob{}, f
	}
	if s := env(EnvArchiveSHA256); s != "" {
		job.want, err = base64.StdEncoding.DecodeString(s)
		if err != nil || len(job.want) != 32 {
			return unpackJob{}, fail(ReasonEnvInvalid, "%s must be a SHA-256 in standard base64", EnvArchiveSHA256)
		}
	}
	return job, nil
}

// positive reads an optional positive decimal integer.
func positive(env Env, name string, def int64) (int64, *failure) {
	s := env(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || (name == EnvMaxEntries && v > 1<<31-1) {
		return 0, fail(ReasonEnvInvalid, "%s must be a positive decimal integer", name)
	}
	return v, nil
}

// resolveNewDir resolves the parent of a directory to create, like
// download's resolveTarget: every symlink of the parent followed, the
// result inside the mount, the last component left alone. One trailing "/"
// is allowed: the target is a directory.
func (m *mount) resolveNewDir(p string) (parentRel, base string, f *failure) {
	if !filepath.IsAbs(p) {
		return "", "", fail(ReasonPathOutsideMount, "path '%s' must be absolute, and within the workspace volume mounted at '%s'", p, m.path)
	}
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "" || filepath.Clean(trimmed) == m.path {
		return "", "", fail(ReasonPathIsMountRoot, "target path '%s' is the workspace volume mount point itself, not a new directory", p)
	}
	// Split the path as written: cleaning it first would fold a ".." that
	// follows a symlink the way the filesystem does not.
	cut := strings.LastIndex(trimmed, "/")
	parent, base := trimmed[:cut], trimmed[cut+1:]
	if base == "" || base == "." || base == ".." {
		return "", "", fail(ReasonTargetExists, "target path '%s' names an existing directory; unpack creates a new one", p)
	}
	resolved, exists, err := resolvePath(parent)
	if err != nil {
		return "", "", fail(ReasonTargetDirMissing, "the directory '%s' to unpack into cannot be resolved: %v", parent, describe(err))
	}
	rel, ok := m.rel(resolved)
	if !ok {
		return "", "", m.outside(p, filepath.Join(resolved, base))
	}
	if !exists {
		return "", "", fail(ReasonTargetDirMissing, "the directory '%s' to unpack into does not exist; create it first", parent)
	}
	return rel, base, nil
}

// openNewDirParent opens the target's parent, as a root and as a
// directory, and checks the target is not there yet (the rename checks
// again, atomically).
func (m *mount) openNewDirParent(p, parentRel, base, display string) (*os.Root, *os.File, *failure) {
	parent, err := m.root.OpenRoot(parentRel)
	if err != nil {
		if isEscape(err) {
			return nil, nil, fail(ReasonPathOutsideMount, "path '%s' leads outside the workspace volume mounted at '%s'", p, m.path)
		}
		return nil, nil, fail(ReasonTargetDirMissing, "the directory '%s' to unpack into does not exist; create it first", filepath.Dir(p))
	}
	dir, err := parent.Open(".")
	if err != nil {
		parent.Close()
		return nil, nil, fail(ReasonTargetDirMissing, "the directory '%s' to unpack into cannot be opened: %s", filepath.Dir(p), errno(err))
	}
	_, err = parent.Lstat(base)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		parent.Close()
		dir.Close()
		if err == nil {
			return nil, nil, targetExists(display)
		}
		return nil, nil, fail(ReasonWriteFailed, "cannot check the target '%s': %s", display, errno(err))
	}
	return parent, dir, nil
}

// unpacker is one unpack under way: the staging directory, what the
// archive holds so far, and the bounds.
type unpacker struct {
	client  *http.Client
	format  string
	st      *stage
	t       *tree
	b       budget
	want    []byte
	rng     *ranger
	sawRoot bool
	// stopReading stops a tar.gz's read-ahead before its stream's record
	// is read.
	stopReading func()
}

// run fetches and unpacks the archive into the staging directory; status
// is the store's answer when it failed.
func (u *unpacker) run(url string) (int, *failure) {
	client := u.client
	var sum *inOrder
	if u.want != nil {
		sum = newInOrder()
	}
	if u.format == FormatZip {
		r, status, f := openRanger(client, url, u.b.lim.size, sum)
		if f != nil {
			return status, f
		}
		defer r.close()
		f = u.unpackZip(r)
		return r.status, f
	}
	return u.fetchTarGz(client, url, sum)
}

// fetchTarGz streams the archive with one GET.
func (u *unpacker) fetchTarGz(client *http.Client, url string, sum *inOrder) (int, *failure) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return 0, fail(ReasonEnvInvalid, "%s is not a valid URL", EnvURL)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, unreachable("download", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return resp.StatusCode, statusFailure(resp.StatusCode, "download")
	}
	if resp.ContentLength > u.b.lim.size {
		return 0, fail(ReasonArchiveTooLarge, "the archive is %d bytes, over the %d byte cap", resp.ContentLength, u.b.lim.size)
	}
	return 0, u.unpackTarGz(&archiveStream{r: resp.Body, limit: u.b.lim.size, sum: sum})
}

// claimRoot accepts the archive's root entry ("./") once.
func (u *unpacker) claimRoot(raw string) *failure {
	if u.sawRoot {
		return unsafePath(raw, "another entry of the archive also names its root")
	}
	u.sawRoot = true
	return nil
}

func notRootDir(raw string) *failure {
	return unsafePath(raw, "it names the unpacked directory itself, as something other than a directory")
}

// dir unpacks a directory entry of a streamed archive.
func (u *unpacker) dir(raw, name string, meta entryMeta) *failure {
	if name == "." {
		if f := u.claimRoot(raw); f != nil {
			return f
		}
		return u.st.dir(".", meta)
	}
	fresh, f := u.t.add(raw, name, kindDir)
	if f != nil {
		return f
	}
	if f := u.st.mkdirs(fresh); f != nil {
		return f
	}
	return u.st.dir(name, meta)
}

// symlink unpacks a symlink entry of a streamed archive, its target
// checked against the entries so far (and against all of them at the end).
func (u *unpacker) symlink(raw, name, target string, meta entryMeta) *failure {
	fresh, f := u.t.addLink(raw, name, target)
	if f != nil {
		return f
	}
	if f := u.st.mkdirs(fresh); f != nil {
		return f
	}
	return u.st.symlink(name, target, meta)
}

// hardlink unpacks a hard link to an earlier regular file.
func (u *unpacker) hardlink(raw, name, linkRaw string) *failure {
	old, fresh, f := u.t.addHardlink(raw, name, linkRaw)
	if f != nil {
		return f
	}
	if f := u.st.mkdirs(fresh); f != nil {
		return f
	}
	return u.st.hardlink(name, old)
}

// file unpacks a regular file of a streamed archive, declaring size bytes.
func (u *unpacker) file(raw, name string, meta entryMeta, size int64, r io.Reader) (f *failure, readErr error) {
	if f := u.b.reserve(size); f != nil {
		return f, nil
	}
	fresh, f := u.t.add(raw, name, kindFile)
	if f != nil {
		return f, nil
	}
	if f := u.st.mkdirs(fresh); f != nil {
		return f, nil
	}
	return u.writeFile(raw, name, meta, size, r)
}

// writeFile writes exactly the size bytes an entry declares, counting them
// against the bounds as they go; an entry holding more or fewer is
// refused.
func (u *unpacker) writeFile(raw, name string, meta entryMeta, size int64, r io.Reader) (f *failure, readErr error) {
	f, readErr = u.st.file(name, meta, &declaredReader{r: &meter{r: r, b: &u.b}, left: size})
	if errors.Is(readErr, errNotDeclared) {
		return fail(ReasonArchiveInvalid, "archive entry %s does not hold the %d bytes it declares", quoteName(raw), size), nil
	}
	return f, readErr
}

// complete runs the checks that need the whole archive: every symlink
// against every entry, the final ratio, the digest.
func (u *unpacker) complete(packed int64, sum []byte) *failure {
	if f := u.t.checkLinks(); f != nil {
		return f
	}
	u.b.packed = func() int64 { return packed }
	if f := u.b.ratioOK(u.b.written); f != nil {
		return f
	}
	if u.want != nil && !bytes.Equal(sum, u.want) {
		return fail(ReasonArchiveInvalid, "the archive's SHA-256 is %s, not the %s recorded for it",
			base64.StdEncoding.EncodeToString(sum), base64.StdEncoding.EncodeToString(u.want))
	}
	return nil
}

// meter counts the bytes read through it against an unpack's budget.
type meter struct {
	r io.Reader
	b *budget
}

func (m *meter) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	if n > 0 {
		if f := m.b.wrote(int64(n)); f != nil {
			return n, f
		}
	}
	return n, err
}

// errNotDeclared marks an entry holding more or fewer bytes than it
// declares.
var errNotDeclared = errors.New("entry size differs from the declared one")

// declaredReader yields exactly the left bytes an entry declares. Past
// them it reads once more, which must find the end: that read is also
// where archive/zip checks the entry's CRC, whose error it passes on.
type declaredReader struct {
	r    io.Reader
	left int64
}

func (d *declaredReader) Read(p []byte) (int, error) {
	if d.left == 0 {
		return 0, d.end()
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.r.Read(p)
	d.left -= int64(n)
	switch {
	case errors.Is(err, io.EOF) && d.left > 0:
		return n, errNotDeclared
	}
	return n, err
}

// end probes for the end past the declared bytes.
func (d *declaredReader) end() error {
	var probe [1]byte
	for range 100 { // a reader may return 0, nil; not forever
		n, err := d.r.Read(probe[:])
		switch {
		case n > 0:
			return errNotDeclared
		case errors.Is(err, io.EOF):
			return io.EOF
		case err != nil:
			return err
		}
	}
	return io.ErrNoProgress
}
