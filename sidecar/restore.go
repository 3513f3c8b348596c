package sidecar

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/klauspost/compress/gzip"
)

// restoreVolume replaces the contents of the volume at CAIRN_MOUNT_ROOT
// with the snapshot whose manifest is at CAIRN_URL (snapshot_protocol.go).
// It first finishes whatever an earlier restore left (restore_swap.go),
// then reads and checks the whole manifest, builds the tree in a staging
// directory at the root, every file checked against its digest as it is
// written, and swaps only once all is there: a failure before the swap
// leaves the volume as it was. Reasons: digest_mismatch,
// manifest_invalid, too_many_entries, snapshot_too_large, the store's,
// sidecar_rejected, write_failed, volume_full.
func restoreVolume(env Env, in io.Reader, out io.Writer) Result {
	return restoreWith(env, in, out, nil)
}

// restoreWith is restoreVolume; stop, in tests, stops the swap after the
// named step as a kill would.
func restoreWith(env Env, in io.Reader, out io.Writer, stop func(step string) bool) Result {
	root, bad := mountRoot(env)
	if bad != nil {
		return *bad
	}
	job, f := restoreJobOf(env)
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
		return failed(fail(ReasonWriteFailed, "cannot open the volume mounted at '%s': %s", m.path, errno(err)), 0)
	}
	defer dir.Close()
	if f := recoverRestores(m.root, int(dir.Fd())); f != nil {
		return failed(f, 0)
	}
	client := httpClient()
	man, status, f := fetchManifest(client, job)
	if f != nil {
		return failed(f, status)
	}
	st, f := newRestoreStage(m, dir)
	if f != nil {
		return failed(f, 0)
	}
	talk := newConversation(in, out)
	b := &builder{st: st, man: man, client: client, talk: talk, moved: startProgress(env, talk, man.bytes)}
	f = b.build()
	b.moved.end()
	if f != nil {
		st.abort()
		return failed(f, b.status)
	}
	if f := st.swap(man.entries, stop); f != nil {
		return failed(f, 0)
	}
	size := man.bytes
	return Result{OK: true, Entries: len(man.entries), Size: &size}
}

// restoreJob is one restore's input.
type restoreJob struct {
	url        string
	want       []byte // the manifest's SHA-256
	maxEntries int
	maxBytes   int64
}

func restoreJobOf(env Env) (restoreJob, *failure) {
	vals, f := requireEnv(env, EnvURL, EnvArchiveSHA256)
	if f != nil {
		return restoreJob{}, f
	}
	job := restoreJob{url: vals[EnvURL]}
	var err error
	job.want, err = base64.StdEncoding.DecodeString(vals[EnvArchiveSHA256])
	if err != nil || len(job.want) != sha256.Size {
		return restoreJob{}, fail(ReasonEnvInvalid, "%s must be a SHA-256 in standard base64", EnvArchiveSHA256)
	}
	entries, f := positive(env, EnvMaxEntries, DefaultMaxSnapshotEntries)
	if f != nil {
		return restoreJob{}, f
	}
	job.maxEntries = int(entries)
	if job.maxBytes, f = positive(env, EnvMaxBytes, defaultMaxBytes); f != nil {
		return restoreJob{}, f
	}
	return job, nil
}

// manifest is a restore's checked manifest: its entries in order, the
// root first, and the bytes of its files.
type manifest struct {
	entries []ManifestEntry
	bytes   int64
	sizes   map[string]int64 // each digest's size
}

// fetchManifest reads and checks the manifest as it streams in, within
// MaxManifestBytes: its digest first (the rest of the object is read for
// it even when an entry was refused), then its entries.
func fetchManifest(client *http.Client, job restoreJob) (*manifest, int, *failure) {
	resp, status, f := get(client, job.url)
	if f != nil {
		return nil, status, f
	}
	defer resp.Body.Close()
	tooLarge := fail(ReasonSnapshotTooLarge, "the manifest is over %d bytes", MaxManifestBytes)
	if resp.ContentLength > MaxManifestBytes {
		return nil, 0, tooLarge
	}
	body := &capped{r: resp.Body, left: MaxManifestBytes}
	h := sha256.New()
	raw := io.TeeReader(body, h)
	man, parsed := parseManifest(raw, job)
	_, _ = io.Copy(io.Discard, raw) // its error is body's
	switch {
	case errors.Is(body.err, errManifestOverCap):
		return nil, 0, tooLarge
	case body.err != nil:
		return nil, 0, unreachable("download", body.err)
	case !bytes.Equal(h.Sum(nil), job.want):
		return nil, 0, fail(ReasonDigestMismatch, "the manifest's SHA-256 is %s, not the %s recorded for the snapshot",
			base64.StdEncoding.EncodeToString(h.Sum(nil)), base64.StdEncoding.EncodeToString(job.want))
	case parsed != nil:
		return nil, 0, parsed
	}
	return man, 0, nil
}

// get starts a GET of url; a status other than 2xx is the store's
// failure. The caller closes the body.
func get(client *http.Client, url string) (*http.Response, int, *failure) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		return nil, 0, fail(ReasonEnvInvalid, "a download URL the server gave is not valid")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, unreachable("download", err)
	}
	if resp.StatusCode >= 300 {
		resp.Body.Close()
		return nil, resp.StatusCode, statusFailure(resp.StatusCode, "download")
	}
	return resp, 0, nil
}

// errManifestOverCap marks a manifest longer than MaxManifestBytes.
var errManifestOverCap = errors.New("manifest over its size cap")

// capped reads at most left bytes of r and fails past them; err keeps the
// first error other than the end, for the caller to tell from a parse
// error.
type capped struct {
	r    io.Reader
	left int64
	err  error
}

func (c *capped) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.err = errManifestOverCap
		return 0, c.err
	}
	c.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		c.err = err
	}
	return n, err
}

// parseManifest decodes gzip-compressed JSON lines and checks each entry
// against those before it (manifestChecker).
func parseManifest(r io.Reader, job restoreJob) (*manifest, *failure) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, invalidManifest("it is not gzip-compressed")
	}
	br := bufio.NewReaderSize(zr, MaxManifestLine)
	c := &manifestChecker{job: job, kinds: map[string]string{}, m: manifest{sizes: map[string]int64{}}}
	for {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, invalidManifest(fmt.Sprintf("line %d is longer than %d bytes", len(c.m.entries)+1, MaxManifestLine))
		case errors.Is(err, io.EOF) && len(line) == 0:
			return c.finish()
		case errors.Is(err, io.EOF):
			return nil, invalidManifest("its last line does not end")
		case err != nil:
			return nil, invalidManifest("it does not decompress: " + err.Error())
		}
		if f := c.line(line); f != nil {
			return nil, f
		}
	}
}

func invalidManifest(why string) *failure {
	return fail(ReasonManifestInvalid, "the snapshot's manifest is refused: %s", why)
}

// manifestChecker checks a manifest entry by entry: the root first, every
// path clean and relative, each once, its directory before it.
type manifestChecker struct {
	job   restoreJob
	m     manifest
	kinds map[string]string // path: type
}

// line decodes one line strictly: one object, known fields only.
func (c *manifestChecker) line(line []byte) *failure {
	if len(c.m.entries) == c.job.maxEntries {
		return fail(ReasonTooManyEntries, "the snapshot holds more than %d entries, the most a restore writes", c.job.maxEntries)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var e ManifestEntry
	if err := dec.Decode(&e); err != nil {
		return invalidManifest(fmt.Sprintf("line %d is not an entry: %v", len(c.m.entries)+1, err))
	}
	if len(bytes.TrimSpace(line[dec.InputOffset():])) > 0 {
		return invalidManifest(fmt.Sprintf("line %d holds more than one entry", len(c.m.entries)+1))
	}
	if why := c.check(&e); why != "" {
		return invalidManifest(fmt.Sprintf("entry %s %s", quoteName(e.Path), why))
	}
	if e.Type == ManifestFile {
		if e.Size > c.job.maxBytes-c.m.bytes {
			return fail(ReasonSnapshotTooLarge, "the snapshot's files hold more than %d bytes, the most a restore writes", c.job.maxBytes)
		}
		c.m.bytes += e.Size
	}
	c.kinds[e.Path] = e.Type
	c.m.entries = append(c.m.entries, e)
	return nil
}

func (c *manifestChecker) finish() (*manifest, *failure) {
	if len(c.m.entries) == 0 {
		return nil, invalidManifest("it holds no entry")
	}
	return &c.m, nil
}

// check says what is wrong with an entry, or "".
func (c *manifestChecker) check(e *ManifestEntry) string {
	if len(c.m.entries) == 0 {
		if e.Path != "." || e.Type != ManifestDir {
			return "comes first, where the root directory '.' must"
		}
	} else if why := c.checkPath(e.Path); why != "" {
		return why
	}
	switch {
	case e.Mode > 0o7777:
		return "has a mode beyond 07777"
	case e.UID < 0 || e.UID > maxID || e.GID < 0 || e.GID > maxID:
		return "has an owner that is not a numeric user and group"
	}
	switch e.Type {
	case ManifestDir:
		return noContent(e)
	case ManifestSymlink:
		return checkLink(e)
	case ManifestFile:
		return c.checkFile(e)
	}
	return "has an unknown type"
}

// maxID is the largest user or group ID; 2^32-1 means "unchanged" to
// chown(2).
const maxID = 1<<32 - 2

// checkPath checks a path other than the root's.
func (c *manifestChecker) checkPath(p string) string {
	switch {
	case p == "" || p == ".":
		return "names the root again, or nothing"
	case len(p) > maxNameBytes:
		return "has a path longer than 4096 bytes"
	case !utf8.ValidString(p) || strings.ContainsRune(p, 0):
		return "has a path that is not a file name"
	case strings.HasPrefix(p, "/"):
		return "has an absolute path"
	case path.Clean(p) != p:
		return "has a path that is not clean"
	}
	for _, part := range strings.Split(p, "/") {
		switch {
		case part == "..":
			return "has a '..' component"
		case len(part) > maxNameComponent:
			return "has a component longer than 255 bytes"
		}
	}
	if _, dup := c.kinds[p]; dup {
		return "comes twice"
	}
	if c.kinds[path.Dir(p)] != ManifestDir {
		return "does not come after its directory"
	}
	if !strings.Contains(p, "/") && isRestoreName(p) {
		return "has a name a restore keeps for itself"
	}
	return ""
}

func noContent(e *ManifestEntry) string {
	if e.Size != 0 || e.SHA256 != "" || e.Target != "" {
		return "holds what only a file or a symlink holds"
	}
	return ""
}

// checkLink checks a symlink, whose target may be anything the kernel
// takes: a restore never follows it.
func checkLink(e *ManifestEntry) string {
	switch {
	case e.Size != 0 || e.SHA256 != "":
		return "holds what only a file holds"
	case e.Target == "" || len(e.Target) >= maxNameBytes || strings.ContainsRune(e.Target, 0):
		return "has a symlink target that is not a path"
	}
	return ""
}

// checkFile checks a file's size and digest: an empty file has the empty
// digest, and a digest one size throughout.
func (c *manifestChecker) checkFile(e *ManifestEntry) string {
	switch {
	case e.Target != "":
		return "holds what only a symlink holds"
	case e.Size < 0:
		return "has a negative size"
	case !isHexSHA256(e.SHA256):
		return "has a digest that is not 64 lower-case hex digits"
	case (e.Size == 0) != (e.SHA256 == emptyDigest):
		return "has a digest that cannot be its size's"
	}
	if size, seen := c.m.sizes[e.SHA256]; seen && size != e.Size {
		return "has a digest another entry gives another size"
	}
	c.m.sizes[e.SHA256] = e.Size
	return ""
}

func isHexSHA256(s string) bool {
	return len(s) == 2*sha256.Size && isLowerHex(s)
}

func isLowerHex(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
