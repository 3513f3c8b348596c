package sidecar

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// casStore is a fake object store for snapshots and restores. A PUT must
// carry a Content-Length equal to its body and an x-amz-checksum-sha256
// matching it, as a presigned URL binding both demands (400 otherwise);
// the body is kept by path. A GET serves what was kept, whole, and counts
// the GETs of each path.
type casStore struct {
	*httptest.Server
	refuse   int  // answer every PUT with this status
	noLength bool // answer a GET without Content-Length (chunked, when large)

	mu      sync.Mutex
	objects map[string][]byte
	gets    map[string]int
	puts    []string
}

func startCAS(t *testing.T) *casStore {
	t.Helper()
	s := &casStore{objects: map[string][]byte{}, gets: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *casStore) serve(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if path == "/by-query" {
		path = "/" + r.URL.Query().Get("key")
	}
	switch r.Method {
	case http.MethodPut:
		body, err := io.ReadAll(r.Body)
		switch {
		case err != nil, r.ContentLength != int64(len(body)), len(r.TransferEncoding) > 0:
			http.Error(w, "content length does not match the signed one", http.StatusBadRequest)
			return
		case r.Header.Get(checksumHeader) != sum(body):
			http.Error(w, "BadDigest", http.StatusBadRequest)
			return
		case s.refuse != 0:
			w.WriteHeader(s.refuse)
			return
		}
		s.mu.Lock()
		s.objects[path] = body
		s.puts = append(s.puts, path)
		s.mu.Unlock()
	case http.MethodGet:
		s.mu.Lock()
		obj, ok := s.objects[path]
		s.gets[path]++
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		if !s.noLength {
			w.Header().Set("Content-Length", strconv.Itoa(len(obj)))
		}
		w.Write(obj) //nolint:errcheck // the client may be gone
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (s *casStore) object(key string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.objects["/"+key]
}

func (s *casStore) keep(key string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objects["/"+key] = data
}

// flip changes one byte of a stored object, as a store that rotted would.
func (s *casStore) flip(t *testing.T, key string, at int) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	obj := append([]byte(nil), s.objects["/"+key]...)
	require.Greater(t, len(obj), at, "object %s", key)
	obj[at] ^= 0x5a
	s.objects["/"+key] = obj
}

func (s *casStore) getsOf(key string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets["/"+key]
}

func (s *casStore) putsSoFar() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.puts...)
}

// casLocation is where the fake server's index has a digest.
type casLocation struct {
	key          string
	offset, size int64
	bundle       bool
}

// casServer plays the server's side of snapshots and restores against a
// casStore: it keeps where each digest is (the server's content index),
// answers have and locate from it, and grants URLs of objects named by
// their digest, signed anew each time (a counter in the query), so that a
// restore sees a new URL for an object it fetched before.
type casServer struct {
	store *casStore
	// before runs as a Need arrives, ahead of its answer; answer, when it
	// returns true, replaces the answer, and a nil *Grant then closes the
	// sidecar's stdin instead.
	before func(Need)
	answer func(Need) (*Grant, bool)

	// byQuery names every object by a query parameter of one path, as a
	// store may: a URL without its query then names no object.
	byQuery bool

	mu     sync.Mutex
	where  map[string]casLocation
	signed atomic.Int64
}

func newCASServer(t *testing.T) *casServer {
	return &casServer{store: startCAS(t), where: map[string]casLocation{}}
}

func (c *casServer) url(key string) string {
	if c.byQuery {
		return fmt.Sprintf("%s/by-query?key=%s&X-Amz-Signature=%d&%s", c.store.URL, key, c.signed.Add(1), signedQuery)
	}
	return fmt.Sprintf("%s/%s?X-Amz-Signature=%d&%s", c.store.URL, key, c.signed.Add(1), signedQuery)
}

// grant answers one Need as the server would.
func (c *casServer) grant(n Need) *Grant {
	if c.before != nil {
		c.before(n)
	}
	if c.answer != nil {
		if g, ok := c.answer(n); ok {
			return g
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch n.Need {
	case NeedHave:
		var g Grant
		for i, d := range n.Digests {
			if _, ok := c.where[d]; !ok {
				g.Missing = append(g.Missing, i)
			}
		}
		return &g
	case NeedBlob:
		key := "blob/" + hexOf(n.SHA256B64)
		c.where[hexOf(n.SHA256B64)] = casLocation{key: key, size: n.Size}
		return &Grant{URL: c.url(key)}
	case NeedBundle:
		key := "bundle/" + hexOf(n.SHA256B64)
		for _, m := range n.Members {
			c.where[m.SHA256] = casLocation{key: key, offset: m.Offset, size: m.Size, bundle: true}
		}
		return &Grant{URL: c.url(key)}
	case NeedManifest:
		return &Grant{URL: c.url(manifestKey(n.SHA256B64))}
	case NeedProgress:
		return &Grant{}
	case NeedLocate:
		var g Grant
		index := map[string]int{}
		for _, d := range n.Digests {
			l, ok := c.where[d]
			if !ok {
				return &Grant{Error: "content " + d + " is not in the store"}
			}
			i, ok := index[l.key]
			if !ok {
				i = len(g.URLs)
				index[l.key] = i
				g.URLs = append(g.URLs, c.url(l.key))
			}
			g.Locations = append(g.Locations, Location{Object: i, Offset: l.offset, Size: l.size, Bundle: l.bundle})
		}
		return &g
	}
	return &Grant{Error: "out of turn"}
}

func manifestKey(sha string) string { return "manifest/" + hexOf(sha) }

// hexOf turns a base64 digest into hex.
func hexOf(b64 string) string {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		panic(err)
	}
	return hex.EncodeToString(raw)
}

// talked is what a run printed and asked.
type talked struct {
	line  string
	code  int
	needs []Need
}

// converse runs a command that speaks the Need/Grant dialog, answering
// each Need line with c's Grant, and checks the framing: every line is
// compact JSON, the result line comes last and alone.
func converse(t *testing.T, c *casServer, run func(in io.Reader, out io.Writer) int) talked {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		code := run(inR, outW)
		_ = outW.Close() // a pipe's Close never fails
		done <- code
	}()
	guard := time.AfterFunc(60*time.Second, func() { outW.CloseWithError(errors.New("the run blocked for 60s")) })
	defer guard.Stop()
	var got talked
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
		got.needs = append(got.needs, n)
		g := c.grant(n)
		if g == nil {
			_ = inW.Close() // the server went away
			continue
		}
		_, err := inW.Write(append(mustJSONBytes(g), '\n'))
		require.NoError(t, err)
	}
	require.NoError(t, sc.Err())
	_ = inW.Close()
	got.code = <-done
	require.Len(t, lines, 1, "one result line")
	got.line = lines[0]
	require.NotContains(t, got.line, c.store.URL, "no URL in the result line")
	require.NotContains(t, got.line, "X-Amz")
	return got
}

// snap takes a snapshot of v through c.
func snap(t *testing.T, c *casServer, v volume, vars map[string]string) (Result, talked) {
	t.Helper()
	all := map[string]string{EnvMountRoot: v.ws}
	for k, val := range vars {
		all[k] = val
	}
	got := converse(t, c, func(in io.Reader, out io.Writer) int { return Main([]string{CommandSnapshot}, env(all), in, out) })
	return decodeLine(t, got.line), got
}

// restoreVars restores the snapshot whose manifest digest is sha into v.
func restoreVars(c *casServer, v volume, sha string) map[string]string {
	return map[string]string{EnvMountRoot: v.ws, EnvURL: c.url(manifestKey(sha)), EnvArchiveSHA256: sha}
}

// restore runs a restore through Main.
func restore(t *testing.T, c *casServer, vars map[string]string) (Result, talked) {
	t.Helper()
	got := converse(t, c, func(in io.Reader, out io.Writer) int { return Main([]string{CommandRestore}, env(vars), in, out) })
	return decodeLine(t, got.line), got
}

// needsOf lists the Needs of one kind.
func needsOf(needs []Need, kind string) []Need {
	var out []Need
	for _, n := range needs {
		if n.Need == kind {
			out = append(out, n)
		}
	}
	return out
}

// decodeManifest reads a manifest's entries.
func decodeManifest(t *testing.T, data []byte) []ManifestEntry {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	raw, err := io.ReadAll(zr)
	require.NoError(t, err)
	var out []ManifestEntry
	for _, line := range strings.SplitAfter(string(raw), "\n") {
		if line == "" {
			continue
		}
		require.True(t, strings.HasSuffix(line, "\n"))
		var e ManifestEntry
		require.NoError(t, json.Unmarshal([]byte(line), &e))
		out = append(out, e)
	}
	return out
}

// encodeLines writes raw manifest lines, whatever they say, gzipped.
func encodeLines(t *testing.T, lines ...string) []byte {
	t.Helper()
	return gzipped(t, []byte(strings.Join(lines, "\n")+"\n"))
}

// rootMeta is what a tree's comparison leaves out: its root's own mode,
// owner and mtime.
type rootMeta struct {
	mode     fs.FileMode
	uid, gid uint32
	mtime    int64
}

func rootMetaOf(t *testing.T, root string) rootMeta {
	t.Helper()
	fi, err := os.Lstat(root)
	require.NoError(t, err)
	st := fi.Sys().(*syscall.Stat_t)
	return rootMeta{mode: fi.Mode(), uid: st.Uid, gid: st.Gid, mtime: fi.ModTime().UnixNano()}
}

// requireNoRestoreNames checks that no directory of a restore is left at
// the root.
func requireNoRestoreNames(t *testing.T, root string) {
	t.Helper()
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	for _, e := range ents {
		require.False(t, strings.HasPrefix(e.Name(), ".cairn-"), "%s left in %s", e.Name(), root)
	}
}

// restoreNames lists the restore directories at a root, by prefix.
func restoreNames(t *testing.T, root string) []string {
	t.Helper()
	ents, err := os.ReadDir(root)
	require.NoError(t, err)
	var out []string
	for _, e := range ents {
		if prefix, _, ok := restoreNameOf(e.Name()); ok {
			out = append(out, prefix)
		}
	}
	sort.Strings(out)
	return out
}

// setTimesTree gives every entry below root (root too) a distinct mtime
// with nanoseconds, deepest first, never following a symlink.
func setTimesTree(t *testing.T, root string) {
	t.Helper()
	var paths []string
	require.NoError(t, filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano()
	for i := len(paths) - 1; i >= 0; i-- {
		require.NoError(t, setTimes(atFDCWD, paths[i], time.Unix(0, base+int64(i)*1_000_003_007)))
	}
}

// hexSum is the lower-case hex SHA-256 of data.
func hexSum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}
