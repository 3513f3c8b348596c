package sidecar

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// bucket is a fake object store for pack and unpack. A PUT must carry a
// Content-Length equal to its body (never chunked) and, unless loose, an
// x-amz-checksum-sha256 matching it, as a presigned URL binding both
// demands; the body is kept by path. A GET serves what was kept, with
// Range, through http.ServeContent.
type bucket struct {
	*httptest.Server
	loose   bool // check nothing and hash nothing: benchmarks, where curl -T sends no checksum
	discard bool // do not keep PUT bodies (benchmarks)
	refuse  int  // answer every PUT with this status

	mu      sync.Mutex
	objects map[string][]byte
	puts    []bucketPut
	gets    []string // the Range header of each GET
}

type bucketPut struct {
	path     string
	size     int64
	checksum string
}

func startBucket(t testing.TB) *bucket {
	t.Helper()
	b := &bucket{objects: map[string][]byte{}}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func (b *bucket) serve(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPut:
		b.put(w, r)
	case http.MethodGet:
		b.mu.Lock()
		obj, ok := b.objects[r.URL.Path]
		b.gets = append(b.gets, r.Header.Get("Range"))
		b.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(obj))
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (b *bucket) put(w http.ResponseWriter, r *http.Request) {
	if b.loose && b.discard {
		_, err := io.Copy(io.Discard, r.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
		return
	}
	h := sha256.New()
	var kept bytes.Buffer
	sink := io.Writer(h)
	if !b.discard {
		sink = io.MultiWriter(h, &kept)
	}
	n, err := io.Copy(sink, r.Body)
	switch {
	case err != nil:
		w.WriteHeader(http.StatusBadRequest)
		return
	case !b.loose && (r.ContentLength != n || len(r.TransferEncoding) > 0):
		http.Error(w, "content length does not match the signed one", http.StatusBadRequest)
		return
	case !b.loose && r.Header.Get(checksumHeader) != base64.StdEncoding.EncodeToString(h.Sum(nil)):
		http.Error(w, "BadDigest", http.StatusBadRequest)
		return
	case b.refuse != 0:
		w.WriteHeader(b.refuse)
		return
	}
	b.mu.Lock()
	b.objects[r.URL.Path] = kept.Bytes()
	b.puts = append(b.puts, bucketPut{path: r.URL.Path, size: n, checksum: r.Header.Get(checksumHeader)})
	b.mu.Unlock()
}

// keyURL is a presigned-looking URL of key.
func (b *bucket) keyURL(key string) string { return b.URL + "/bucket/" + key + "?" + signedQuery }

// keep stores an object, as if uploaded before, and returns its URL.
func (b *bucket) keep(key string, data []byte) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objects["/bucket/"+key] = data
	return b.keyURL(key)
}

func (b *bucket) object(key string) []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.objects["/bucket/"+key]
}

func (b *bucket) putsSoFar() []bucketPut {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]bucketPut(nil), b.puts...)
}

func (b *bucket) getsSoFar() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.gets...)
}

// fastVolume is newVolume on tmpfs when the machine has one: the tests
// that write thousands of files measure the code, not a shared disk's
// journal under other load.
func fastVolume(t testing.TB) volume {
	t.Helper()
	base, err := os.MkdirTemp("/dev/shm", "cairn-sidecar-test-")
	if err != nil {
		if tt, ok := t.(*testing.T); ok {
			return newVolume(tt)
		}
		base = t.TempDir()
	} else {
		t.Cleanup(func() { os.RemoveAll(base) })
	}
	v := volume{base: base, ws: filepath.Join(base, "ws"), outside: filepath.Join(base, "outside"), sibling: filepath.Join(base, "wsX")}
	for _, dir := range []string{v.ws, v.outside, v.sibling} {
		require.NoError(t, os.Mkdir(dir, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(v.outside, "secret"), []byte("top secret"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(v.sibling, "file"), []byte("sibling"), 0o644))
	return v
}

// packed is what a pack run printed and what the store kept of it.
type packed struct {
	line    string
	code    int
	needs   []Need // for upload URLs
	reports []Need // of progress, answered with an empty Grant
	archive []byte // the object, or the parts in order
}

// grantFor answers a Need with a URL of the bucket, by need and number.
func grantFor(b *bucket) func(Need) Grant {
	return func(n Need) Grant { return Grant{URL: b.keyURL(needKey(n))} }
}

func needKey(n Need) string {
	if n.Need == NeedObject {
		return "pack/object"
	}
	return fmt.Sprintf("pack/part-%05d", n.Number)
}

func mustJSONBytes(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// runPack runs pack through Main, answering each Need line with grant's
// Grant on its standard input, and checks the framing: every line is
// compact JSON, each Need line has a "need" key, the result line has none
// and comes last.
func runPack(t testing.TB, vars map[string]string, b *bucket, grant func(Need) Grant) packed {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := Main([]string{CommandPack}, env(vars), inR, outW)
		_ = outW.Close() // a pipe's Close never fails
		done <- code
	}()
	guard := time.AfterFunc(60*time.Second, func() { outW.CloseWithError(errors.New("pack blocked for 60s")) })
	defer guard.Stop()
	var p packed
	var lines []string
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		var probe map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(line), &probe), "line %q is JSON", line)
		if _, ok := probe["need"]; !ok {
			lines = append(lines, line)
			continue
		}
		require.Empty(t, lines, "no Need line follows the result")
		var n Need
		require.NoError(t, json.Unmarshal([]byte(line), &n))
		reply := []byte("{}")
		if n.Need == NeedProgress {
			p.reports = append(p.reports, n)
		} else {
			p.needs = append(p.needs, n)
			reply = mustJSONBytes(grant(n))
		}
		_, err := inW.Write(append(reply, '\n'))
		require.NoError(t, err)
	}
	require.NoError(t, sc.Err())
	_ = inW.Close() // a pipe's Close never fails
	p.code = <-done
	require.Len(t, lines, 1, "one result line")
	p.line = lines[0]
	for _, n := range p.needs {
		p.archive = append(p.archive, b.object(needKey(n))...)
	}
	return p
}

func decodeLine(t testing.TB, line string) Result {
	t.Helper()
	var r Result
	require.NoError(t, json.Unmarshal([]byte(line), &r), "line %q", line)
	return r
}

// packVars is a pack of source as format.
func packVars(v volume, source, format string) map[string]string {
	return map[string]string{
		EnvMountRoot: v.ws, EnvSourcePath: source, EnvFormat: format,
		EnvMaxSize: "1073741824", EnvPartSize: "16777216",
	}
}

// node is one file of a tree as the comparisons see it.
type node struct {
	kind     string
	mode     fs.FileMode
	mtime    int64 // nanoseconds, truncated to the format's precision
	uid, gid uint32
	content  string // a file's SHA-256, a symlink's target
}

// snapshot describes every file below root (not root itself), never
// following a symlink; mtimes are truncated to precision.
func snapshot(t testing.TB, root string, precision time.Duration) map[string]node {
	t.Helper()
	out := map[string]node{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		n := node{mode: fi.Mode(), mtime: fi.ModTime().Truncate(precision).UnixNano(), uid: st.Uid, gid: st.Gid}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			n.kind = "symlink"
			n.content, err = os.Readlink(p)
		case fi.IsDir():
			n.kind = "dir"
		default:
			n.kind = "file"
			var data []byte
			data, err = os.ReadFile(p)
			n.content = sum(data)
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = n
		return err
	})
	require.NoError(t, err)
	return out
}

// requireSameTree compares two snapshots entry by entry, naming the first
// differences rather than printing both trees.
func requireSameTree(t testing.TB, want, got map[string]node) {
	t.Helper()
	var diffs []string
	for name, w := range want {
		if g, ok := got[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: missing", name))
		} else if g != w {
			diffs = append(diffs, fmt.Sprintf("%s: want %+v, got %+v", name, w, g))
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			diffs = append(diffs, fmt.Sprintf("%s: unexpected", name))
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 10 {
		diffs = append(diffs[:10], fmt.Sprintf("… and %d more", len(diffs)-10))
	}
	require.Empty(t, diffs, "the trees differ")
}

// requireNoStaging checks that no staging directory is left in dir.
func requireNoStaging(t testing.TB, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), stagingPrefix), "staging directory %s left in %s", e.Name(), dir)
	}
}

// hostile is an archive entry built by hand, whatever it says.
type hostile struct {
	name     string
	kind     byte // a tar type flag
	body     string
	link     string
	mode     int64
	zipMode  fs.FileMode // overrides the mode of a zip entry
	declared int64       // a zip entry's lie about its size (0: the truth)
	rawName  string      // a tar name archive/tar refuses to write, patched over name
}

// patched gives a tar entry a name archive/tar will not write (a regular
// file ending in "/"), of the same length as its own.
func patched(e hostile, raw string) hostile {
	e.rawName = raw
	return e
}

func hfile(name, body string) hostile {
	return hostile{name: name, kind: tar.TypeReg, body: body, mode: 0o644}
}
func hdir(name string) hostile { return hostile{name: name, kind: tar.TypeDir, mode: 0o755} }
func hlink(name, target string) hostile {
	return hostile{name: name, kind: tar.TypeSymlink, link: target, mode: 0o777}
}
func hhard(name, target string) hostile {
	return hostile{name: name, kind: tar.TypeLink, link: target, mode: 0o644}
}
func hother(name string, k byte) hostile { return hostile{name: name, kind: k, mode: 0o644} }

// buildTarGz writes entries as a tar.gz, as they are.
func buildTarGz(t testing.TB, entries ...hostile) []byte {
	t.Helper()
	return gzipped(t, buildTar(t, entries...))
}

// buildTar writes entries as a tar, as they are.
func buildTar(t testing.TB, entries ...hostile) []byte {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	patches := map[int]string{} // header offset: name
	for _, e := range entries {
		if e.rawName != "" {
			require.NoError(t, tw.Flush())
			patches[raw.Len()] = e.rawName
		}
		hdr := &tar.Header{Name: e.name, Typeflag: e.kind, Linkname: e.link, Mode: e.mode, Size: int64(len(e.body)),
			ModTime: time.Unix(1600000000, 0), Format: tar.FormatPAX}
		if e.kind != tar.TypeReg {
			hdr.Size = 0
		}
		require.NoError(t, tw.WriteHeader(hdr))
		if hdr.Size > 0 {
			_, err := io.WriteString(tw, e.body)
			require.NoError(t, err)
		}
	}
	require.NoError(t, tw.Close())
	out := raw.Bytes()
	for at, name := range patches {
		patchTarName(t, out[at:at+512], name)
	}
	return out
}

// gzipped compresses data.
func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	_, err := gz.Write(data)
	require.NoError(t, err)
	require.NoError(t, gz.Close())
	return buf.Bytes()
}

// patchTarName overwrites the name in a ustar header block and fixes its
// checksum.
func patchTarName(t testing.TB, block []byte, name string) {
	t.Helper()
	require.Len(t, block, 512)
	copy(block[0:100], name)
	copy(block[148:156], "        ")
	var sum int
	for _, c := range block {
		sum += int(c)
	}
	copy(block[148:156], fmt.Sprintf("%06o\x00 ", sum))
}

// buildZip writes entries as a zip, as they are; a hard link has no zip
// form and becomes a regular file.
func buildZip(t testing.TB, entries ...hostile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		fh := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: time.Unix(1600000000, 0)}
		body := e.body
		mode := fs.FileMode(e.mode & 0o777)
		switch e.kind {
		case tar.TypeDir:
			mode |= fs.ModeDir
		case tar.TypeSymlink:
			mode |= fs.ModeSymlink
			body = e.link
		case tar.TypeFifo:
			mode |= fs.ModeNamedPipe
		case tar.TypeChar:
			mode |= fs.ModeDevice | fs.ModeCharDevice
		}
		if e.zipMode != 0 {
			mode = e.zipMode
		}
		fh.SetMode(mode)
		if e.declared != 0 {
			writeLyingZipEntry(t, zw, fh, body, e.declared)
			continue
		}
		w, err := zw.CreateHeader(fh)
		require.NoError(t, err)
		_, err = io.WriteString(w, body)
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

// writeLyingZipEntry writes body deflated, declaring only declared bytes
// of it (with the CRC of those), as a zip bomb that lies would.
func writeLyingZipEntry(t testing.TB, zw *zip.Writer, fh *zip.FileHeader, body string, declared int64) {
	t.Helper()
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestCompression)
	require.NoError(t, err)
	_, err = io.WriteString(fw, body)
	require.NoError(t, err)
	require.NoError(t, fw.Close())
	fh.CompressedSize64 = uint64(raw.Len())
	fh.UncompressedSize64 = uint64(declared)
	fh.CRC32 = crc32.ChecksumIEEE([]byte(body[:declared]))
	w, err := zw.CreateRaw(fh)
	require.NoError(t, err)
	_, err = w.Write(raw.Bytes())
	require.NoError(t, err)
}
