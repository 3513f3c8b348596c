package sidecar

import (
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"
)

// ReasonObjectTooLarge refuses a put of a file over CAIRN_MAX_SIZE.
const ReasonObjectTooLarge = "object_too_large"

// HeadBytes is how much of a file's start a put reports: what MIME
// sniffing reads.
const HeadBytes = 3072

// putSource stores a volume file in one pass: it resolves the source and
// checks that it is a regular file inside the mount, opens it once, streams
// exactly its fstat length to the presigned PUT in CAIRN_URL, hashing it
// (SHA-256, MD5) and keeping its head as the bytes go by, then checks that
// the file did not change meanwhile. The result reports what was sent, so
// that the server can compare it with what the store received (the MD5
// with the ETag) before it records anything. Asked to (CAIRN_PROGRESS), it
// reports its progress over in and out as it goes.
func putSource(env Env, in io.Reader, out io.Writer) Result {
	root, bad := mountRoot(env)
	if bad != nil {
		return *bad
	}
	vals, f := requireEnv(env, EnvSourcePath, EnvURL, EnvMaxSize)
	if f != nil {
		return failed(f, 0)
	}
	limit, err := strconv.ParseInt(vals[EnvMaxSize], 10, 64)
	if err != nil || limit < 0 {
		return failed(fail(ReasonEnvInvalid, "%s must be a non-negative decimal integer", EnvMaxSize), 0)
	}
	src := vals[EnvSourcePath]
	m, f := openMount(root)
	if f != nil {
		return failed(f, 0)
	}
	defer m.close()
	rel, f := m.resolveSource(src)
	if f != nil {
		return failed(f, 0)
	}
	file, fi, f := m.openSource(src, rel)
	if f != nil {
		return failed(f, 0)
	}
	defer file.Close()
	size := fi.Size()
	if size > limit {
		return failed(fail(ReasonObjectTooLarge, "source file '%s' is %d bytes, over the %d byte cap of one upload from a volume",
			src, size, limit), 0)
	}
	p := startProgress(env, newConversation(in, out), size)
	sums, status, f := stream(vals[EnvURL], src, p.reader(file), size)
	p.end()
	if f != nil {
		return failed(f, status)
	}
	if f := m.unchanged(src, rel, file, fi); f != nil {
		return failed(f, 0)
	}
	return Result{OK: true, UploadedPath: m.display(rel), Size: &size,
		SHA256B64: base64.StdEncoding.EncodeToString(sums.sha.Sum(nil)),
		MD5:       hex.EncodeToString(sums.md5.Sum(nil)), Head: sums.head.b}
}

// stream sends exactly size bytes of file to url and hashes them on the
// way, through one fixed copy buffer. status is the store's answer, when
// there was one.
func stream(url, src string, file io.Reader, size int64) (sums *digests, status int, f *failure) {
	sums = newDigests()
	in := &readRecorder{r: file}
	status, f = send(url, io.TeeReader(&exactReader{r: in, left: size}, sums), size, src)
	switch {
	case in.err != nil:
		return nil, 0, fail(ReasonSourceUnreadable, "failed to read source file '%s': %s", src, errno(in.err))
	case f != nil:
		return nil, status, f
	case status >= 300:
		// The URL binds no checksum, so a refusal says nothing about the
		// file: every non-2xx is the store's.
		return nil, status, statusFailure(status, "upload")
	}
	return sums, status, nil
}

// readRecorder remembers a read error of the file, so that it is reported
// as the file's, not as the PUT failing.
type readRecorder struct {
	r   io.Reader
	err error
}

func (rr *readRecorder) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	if err != nil && err != io.EOF {
		rr.err = err
	}
	return n, err
}

// digests hashes everything written to it and keeps its first HeadBytes
// bytes, in fixed memory.
type digests struct {
	sha, md5 hash.Hash
	head     headBuffer
}

func newDigests() *digests {
	// MD5 is not for security here: it is what a store's ETag of a single
	// PUT holds, so the server can compare what arrived with what was sent.
	return &digests{sha: sha256.New(), md5: md5.New()}
}

func (d *digests) Write(p []byte) (int, error) {
	d.sha.Write(p)
	d.md5.Write(p)
	_, _ = d.head.Write(p) // never fails
	return len(p), nil
}

// headBuffer keeps the first HeadBytes bytes written to it.
type headBuffer struct{ b []byte }

func (w *headBuffer) Write(p []byte) (int, error) {
	if room := HeadBytes - len(w.b); room > 0 {
		w.b = append(w.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// unchanged checks, after the PUT, that the file sent is still the file at
// the path with the length and times it had when it was opened: a rewrite in
// place moves its mtime and ctime, a rename over it or a removal changes what
// the path names. A rewrite within the filesystem's timestamp granularity of
// the previous write goes unseen; the bytes sent are still the bytes hashed,
// which the server checks against the store.
func (m *mount) unchanged(p, rel string, file *os.File, opened fs.FileInfo) *failure {
	// The path first: unlinking the file also moves its ctime.
	at, err := m.root.Stat(rel)
	if err != nil || !os.SameFile(at, opened) {
		return fail(ReasonSourceChanged, "the source file '%s' was replaced or removed while the upload was in flight", p)
	}
	now, err := file.Stat()
	if err != nil {
		return fail(ReasonSourceUnreadable, "failed to read source file '%s': %v", p, describe(err))
	}
	if stateOf(now) != stateOf(opened) {
		return fail(ReasonSourceChanged, "the source file '%s' was modified while the upload was in flight", p)
	}
	return nil
}

// fileState is what any change to a file's content moves.
type fileState struct {
	size         int64
	mtime, ctime syscall.Timespec
	dev, ino     uint64
}

func stateOf(fi fs.FileInfo) fileState {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileState{size: fi.Size()}
	}
	// Dev and Ino are narrower than uint64 on some platforms.
	return fileState{size: st.Size, mtime: st.Mtim, ctime: st.Ctim, dev: uint64(st.Dev), ino: uint64(st.Ino)}
}
