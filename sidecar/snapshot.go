package sidecar

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"sort"
	"strconv"
	"syscall"
	"time"
	"unicode/utf8"
)

// MaxManifestLine bounds one manifest line, as the server reads it too. A
// path of 4096 bytes and a symlink target of 4095, every byte escaped as
// \u00XX, fit.
const MaxManifestLine = 64 << 10

// emptyDigest is the SHA-256 of no bytes: the content of every empty file,
// which no snapshot uploads and no restore locates.
const emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// snapshotVolume records the volume at CAIRN_MOUNT_ROOT (snapshot_protocol.go):
// it walks and hashes the tree, uploads the content the store lacks
// through the Need/Grant conversation on in and out, then the manifest.
// Reasons: too_many_entries, snapshot_too_large, archive_unsafe_path (a
// name a manifest cannot hold), source_changed, source_unreadable, the
// store's, sidecar_rejected.
func snapshotVolume(env Env, in io.Reader, out io.Writer) Result {
	root, bad := mountRoot(env)
	if bad != nil {
		return *bad
	}
	job, f := snapshotJobOf(env)
	if f != nil {
		return failed(f, 0)
	}
	m, f := openMount(root)
	if f != nil {
		return failed(f, 0)
	}
	defer m.close()
	dir, err := m.root.Open(".")
	if err != nil {
		return failed(fail(ReasonSourceUnreadable, "cannot open the volume mounted at '%s': %s", m.path, errno(err)), 0)
	}
	defer dir.Close()
	talk := newConversation(in, out)
	// One count of the bytes read, total unknown: to hash the files the
	// last manifest does not vouch for, then to upload what the store lacks.
	read := startProgress(env, talk, 0)
	w := &snapWalk{max: job.maxEntries, display: m.path, contents: map[string]*content{},
		prior: priorDigests(httpClient(), job), settled: time.Now().Add(-settleTime).UnixNano(), read: read}
	f = w.walk(dir)
	u := &uploader{talk: talk, client: httpClient(), dir: dir, display: m.path, bundleFileMax: job.bundleFileMax, read: read}
	if f == nil {
		f = u.contents(w)
	}
	read.end()
	if f != nil {
		return failed(f, u.status)
	}
	sum, f := u.manifest(w.entries)
	if f != nil {
		return failed(f, u.status)
	}
	size := w.bytes
	return Result{OK: true, Entries: len(w.entries), Size: &size, UploadedBytes: u.uploaded, Skipped: w.skipped, SHA256B64: sum}
}

// snapshotJob is one snapshot's input.
type snapshotJob struct {
	maxEntries    int
	bundleFileMax int64
	previous      *restoreJob // the workspace's last manifest, when the server names one
}

// settleTime is how long before the walk a file must have last changed
// for its ctime to be recorded for the next snapshot's reuse: timestamps
// are coarser than a write, so a file changed again within the same tick
// as it was read would keep its times. A variable for the tests only.
var settleTime = 2 * time.Second

func snapshotJobOf(env Env) (snapshotJob, *failure) {
	entries, f := positive(env, EnvMaxEntries, DefaultMaxSnapshotEntries)
	if f != nil {
		return snapshotJob{}, f
	}
	job := snapshotJob{maxEntries: int(entries), bundleFileMax: DefaultBundleFileMax}
	if s := env(EnvBundleFileMax); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v < 0 || v > BundleMaxBytes {
			return snapshotJob{}, fail(ReasonEnvInvalid, "%s must be a decimal number of bytes from 0 to %d", EnvBundleFileMax, BundleMaxBytes)
		}
		job.bundleFileMax = v
	}
	if env(EnvURL) != "" {
		prev, f := restoreJobOf(env)
		if f != nil {
			return snapshotJob{}, f
		}
		job.previous = &prev
	}
	return job, nil
}

// priorDigests reads the previous manifest's files by path. A manifest that
// cannot be had only costs the reuse: every file is read instead.
func priorDigests(client *http.Client, job snapshotJob) map[string]ManifestEntry {
	if job.previous == nil {
		return nil
	}
	prev := *job.previous
	prev.maxBytes = math.MaxInt64
	man, _, f := fetchManifest(client, prev)
	if f != nil {
		return nil
	}
	files := make(map[string]ManifestEntry, len(man.entries))
	for _, e := range man.entries {
		if e.Type == ManifestFile && e.CTimeNS != 0 {
			files[e.Path] = e
		}
	}
	return files
}

// content is one digest a snapshot found: its size and the first file
// that holds it, which an upload reads again.
type content struct {
	path string
	size int64
}

// snapWalk records a tree as manifest entries: the root first, then depth
// first, names sorted bytewise within each directory, so an unchanged tree
// always makes the same manifest. Like the pack's walker it never follows
// a symlink: every directory is opened relative to its parent's descriptor
// with O_NOFOLLOW, every file is first described through an O_PATH handle
// and opened only when regular, so no FIFO or device is ever opened.
type snapWalk struct {
	max     int
	display string
	entries []ManifestEntry
	// contents holds each digest once; order lists them as first found,
	// the empty file's never.
	contents map[string]*content
	order    []string
	bytes    int64 // of all regular files
	skipped  int   // special files, left out
	buf      []byte
	// prior are the previous manifest's settled files by path; settled is
	// the ctime (ns) before which a file counts as settled in this one.
	prior   map[string]ManifestEntry
	settled int64
	read    *progress // the bytes read to hash, when asked
}

// walk records the directory dir, the mount root, and everything below.
func (w *snapWalk) walk(dir *os.File) *failure {
	var st syscall.Stat_t
	if err := syscall.Fstat(int(dir.Fd()), &st); err != nil {
		return fail(ReasonSourceUnreadable, "cannot read the volume mounted at '%s': %s", w.display, errno(err))
	}
	if f := w.add(entryOf(".", ManifestDir, &st)); f != nil {
		return f
	}
	w.buf = make([]byte, copyBuffer)
	return w.dir(dir, "")
}

// entryOf is what a manifest records of any entry: its mode bits with
// set-uid, set-gid and sticky, its numeric owner and its mtime in ns.
func entryOf(rel, typ string, st *syscall.Stat_t) ManifestEntry {
	return ManifestEntry{Path: rel, Type: typ, Mode: st.Mode & 0o7777, UID: int(st.Uid), GID: int(st.Gid), MTimeNS: st.Mtim.Nano()}
}

func (w *snapWalk) add(e ManifestEntry) *failure {
	if len(w.entries) == w.max {
		return fail(ReasonTooManyEntries, "the volume holds more than %d entries, the most one snapshot records", w.max)
	}
	w.entries = append(w.entries, e)
	return nil
}

// dir records what the directory dir (rel, "" for the root) holds. At the
// root, the directories a restore works in are left out: they are its,
// not the volume's.
func (w *snapWalk) dir(dir *os.File, rel string) *failure {
	names, f := w.names(dir, rel)
	if f != nil {
		return f
	}
	for _, name := range names {
		if rel == "" && isRestoreName(name) {
			continue
		}
		if f := w.entry(dir, joinRel(rel, name), name); f != nil {
			return f
		}
	}
	return nil
}

// joinRel is rel/name, or name at the root.
func joinRel(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}

// names lists a directory, sorted, a chunk at a time so that a directory
// of more names than the bound is refused before it is all in memory.
func (w *snapWalk) names(dir *os.File, rel string) ([]string, *failure) {
	var names []string
	for {
		chunk, err := dir.Readdirnames(1024)
		names = append(names, chunk...)
		if len(names) > w.max {
			return nil, fail(ReasonTooManyEntries, "the volume holds more than %d entries, the most one snapshot records", w.max)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fail(ReasonSourceUnreadable, "failed to read the directory '%s': %s", w.shown(rel), errno(err))
		}
	}
	sort.Strings(names)
	return names, nil
}

// shown is rel's path in the volume, for messages.
func (w *snapWalk) shown(rel string) string {
	if rel == "" || rel == "." {
		return w.display
	}
	return w.display + "/" + rel
}

// entry records rel, named name in dir, and everything below it.
func (w *snapWalk) entry(dir *os.File, rel, name string) *failure {
	if f := recordable(rel, w.shown(rel)); f != nil {
		return f
	}
	st, err := statAt(int(dir.Fd()), name)
	if err != nil {
		return w.walkError(rel, err)
	}
	switch st.Mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return w.subdir(dir, rel, name, &st)
	case syscall.S_IFREG:
		return w.file(dir, rel, name, &st)
	case syscall.S_IFLNK:
		return w.symlink(dir, rel, name, &st)
	}
	w.skipped++ // a FIFO, socket or device: no snapshot holds one
	return nil
}

// recordable refuses a path a manifest cannot hold as it is: JSON holds
// only UTF-8, and a restore refuses a path longer than PATH_MAX.
func recordable(rel, shown string) *failure {
	switch {
	case !utf8.ValidString(rel):
		return fail(ReasonArchiveUnsafePath, "%s cannot be recorded in a snapshot: its name is not UTF-8", quoteName(shown))
	case len(rel) > maxNameBytes:
		return fail(ReasonArchiveUnsafePath, "%s cannot be recorded in a snapshot: its path is longer than %d bytes", quoteName(shown), maxNameBytes)
	}
	return nil
}

func (w *snapWalk) subdir(parent *os.File, rel, name string, st *syscall.Stat_t) *failure {
	dir, err := openAt(int(parent.Fd()), name, syscall.O_DIRECTORY, st)
	if err != nil {
		return w.walkError(rel, err)
	}
	defer dir.Close()
	if f := w.add(entryOf(rel, ManifestDir, st)); f != nil {
		return f
	}
	return w.dir(dir, rel)
}

func (w *snapWalk) symlink(dir *os.File, rel, name string, st *syscall.Stat_t) *failure {
	target, err := readLinkAt(int(dir.Fd()), name, make([]byte, syscall.PathMax))
	if err != nil {
		return w.walkError(rel, err)
	}
	if !utf8.ValidString(target) {
		return fail(ReasonArchiveUnsafePath, "%s cannot be recorded in a snapshot: its symlink target is not UTF-8", quoteName(w.shown(rel)))
	}
	e := entryOf(rel, ManifestSymlink, st)
	e.Target = target
	return w.add(e)
}

// file hashes a regular file and records it with its digest. The file
// must not change while it is read: its size, times and inode are the
// same before and after.
func (w *snapWalk) file(dir *os.File, rel, name string, st *syscall.Stat_t) *failure {
	if p, ok := w.prior[rel]; ok && p.Size == st.Size && p.MTimeNS == st.Mtim.Nano() && p.CTimeNS == st.Ctim.Nano() &&
		p.Ino == st.Ino {
		e := entryOf(rel, ManifestFile, st)
		e.Size, e.SHA256, e.CTimeNS, e.Ino = p.Size, p.SHA256, p.CTimeNS, p.Ino
		return w.record(e)
	}
	file, err := openAt(int(dir.Fd()), name, 0, st)
	if err != nil {
		return w.walkError(rel, err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return w.walkError(rel, err)
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, w.read.reader(&exactReader{r: file, left: fi.Size()}), w.buf); err != nil {
		return w.readError(rel, err)
	}
	now, err := file.Stat()
	if err != nil {
		return w.walkError(rel, err)
	}
	if stateOf(now) != stateOf(fi) {
		return fail(ReasonSourceChanged, "the file '%s' was modified while the snapshot read it", w.shown(rel))
	}
	stat := fi.Sys().(*syscall.Stat_t)
	e := entryOf(rel, ManifestFile, stat)
	e.Size, e.SHA256 = fi.Size(), hex.EncodeToString(h.Sum(nil))
	if stat.Ctim.Nano() < w.settled {
		e.CTimeNS, e.Ino = stat.Ctim.Nano(), stat.Ino
	}
	return w.record(e)
}

// record adds a file's entry and notes its content.
func (w *snapWalk) record(e ManifestEntry) *failure {
	w.bytes += e.Size
	if _, seen := w.contents[e.SHA256]; !seen && e.Size > 0 {
		w.contents[e.SHA256] = &content{path: e.Path, size: e.Size}
		w.order = append(w.order, e.SHA256)
	}
	return w.add(e)
}

// readError describes a file that could not be read, or that changed
// size while it was.
func (w *snapWalk) readError(rel string, err error) *failure {
	if errors.Is(err, errChanged) {
		return fail(ReasonSourceChanged, "the file '%s' changed size while the snapshot read it", w.shown(rel))
	}
	return fail(ReasonSourceUnreadable, "failed to read '%s': %s", w.shown(rel), errno(err))
}

// walkError describes an entry that could not be described or opened, or
// that was replaced or removed since it was listed.
func (w *snapWalk) walkError(rel string, err error) *failure {
	if replacedOrGone(err) {
		return fail(ReasonSourceChanged, "'%s' was replaced or removed while the snapshot was taken", w.shown(rel))
	}
	return fail(ReasonSourceUnreadable, "failed to read '%s': %s", w.shown(rel), errno(err))
}

func replacedOrGone(err error) bool {
	return errors.Is(err, errReplaced) || errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ELOOP) ||
		errors.Is(err, syscall.ENOTDIR)
}

// b64Digest is a hex digest in standard padded base64, as a Need carries
// it.
func b64Digest(hexDigest string) string {
	raw, _ := hex.DecodeString(hexDigest) // always a digest the walk made
	return base64.StdEncoding.EncodeToString(raw)
}
