package sidecar

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// signedQuery stands in for a presigned URL's query; it must never appear
// in a result line.
const signedQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=cairn%2F20250101&X-Amz-Signature=5ec2e7f00d"

// runLine runs Main and checks the result line's framing: the output is
// exactly one compact JSON object, preceded and followed by "\n". It fails
// the test instead of hanging when a command blocks (a FIFO, say).
func runLine(t *testing.T, args []string, vars map[string]string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- Main(args, env(vars), strings.NewReader(""), &out) }()
	var code int
	select {
	case code = <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%v blocked for 10s", args)
	}
	return requireOneLine(t, out.String()), code
}

// requireOneLine checks the framing of a command's output and returns the
// result line.
func requireOneLine(t *testing.T, out string) string {
	t.Helper()
	require.True(t, strings.HasPrefix(out, "\n") && strings.HasSuffix(out, "\n"), "output %q is framed by newlines", out)
	line := out[1 : len(out)-1]
	require.NotContains(t, line, "\n", "output %q holds one line", out)
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, []byte(line)), "line %q is JSON", line)
	require.Equal(t, compact.String(), line, "the line is compact")
	require.True(t, strings.HasPrefix(line, "{"), "line %q is an object", line)
	return line
}

// quote renders s as encoding/json does.
func quote(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// failureLine is the exact line of a failed prep, upload or download;
// status 0 means the store never answered.
func failureLine(reason, message string, status int) string {
	line := `{"ok":false,"error":` + quote(message) + `,"reason":` + quote(reason)
	if status != 0 {
		line += `,"http_status":` + strconv.Itoa(status)
	}
	return line + "}"
}

// volume is a temporary workspace volume and its neighbours: base/ws is the
// mount root, base/outside and base/wsX (a sibling sharing the mount's
// prefix) lie beside it. All paths are free of symlinks.
type volume struct {
	base, ws, outside, sibling string
}

func newVolume(t *testing.T) volume {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	v := volume{
		base:    base,
		ws:      filepath.Join(base, "ws"),
		outside: filepath.Join(base, "outside"),
		sibling: filepath.Join(base, "wsX"),
	}
	for _, dir := range []string{v.ws, v.outside, v.sibling} {
		require.NoError(t, os.Mkdir(dir, 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(v.outside, "secret"), []byte("top secret"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(v.sibling, "file"), []byte("sibling"), 0o644))
	return v
}

// at returns the path of rel inside the mount, uncleaned.
func (v volume) at(rel string) string { return v.ws + "/" + rel }

func (v volume) write(t *testing.T, rel string, data []byte, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(v.at(rel), data, mode))
	require.NoError(t, os.Chmod(v.at(rel), mode))
}

func (v volume) mkdir(t *testing.T, rel string) {
	t.Helper()
	require.NoError(t, os.Mkdir(v.at(rel), 0o755))
}

func (v volume) symlink(t *testing.T, target, rel string) {
	t.Helper()
	require.NoError(t, os.Symlink(target, v.at(rel)))
}

func (v volume) mkfifo(t *testing.T, rel string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(v.at(rel), 0o644))
}

// socket binds a Unix socket at rel for the rest of the test.
func (v volume) socket(t *testing.T, rel string) {
	t.Helper()
	l, err := net.Listen("unix", v.at(rel))
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func requireAbsent(t *testing.T, path string) {
	t.Helper()
	_, err := os.Lstat(path)
	require.ErrorIs(t, err, os.ErrNotExist, "%s must not exist", path)
}

// received is one request as the fake store saw it.
type received struct {
	method           string
	header           http.Header
	contentLength    int64
	transferEncoding []string
	body             []byte
	bodyErr          error
}

// store is a fake object store. It reads each request's whole body, records
// it, and answers with status and body; before, when set, runs as a request
// arrives, ahead of its body; answer, when set, replaces the canned answer.
type store struct {
	*httptest.Server
	status int
	body   []byte
	before func()
	answer http.HandlerFunc

	mu  sync.Mutex
	got []received
}

func startStore(t *testing.T, s *store) *store {
	t.Helper()
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *store) serve(w http.ResponseWriter, r *http.Request) {
	if s.before != nil {
		s.before()
	}
	body, err := io.ReadAll(r.Body)
	s.mu.Lock()
	s.got = append(s.got, received{
		method: r.Method, header: r.Header.Clone(), contentLength: r.ContentLength,
		transferEncoding: r.TransferEncoding, body: body, bodyErr: err,
	})
	s.mu.Unlock()
	if s.answer != nil {
		s.answer(w, r)
		return
	}
	w.WriteHeader(s.status)
	w.Write(s.body) //nolint:errcheck // the client may be gone
}

// requests returns what the store has received so far.
func (s *store) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

// url is a presigned-looking URL for an object of this store.
func (s *store) url() string { return s.URL + "/bucket/ws/key?" + signedQuery }

// closedURL points at a local port that nothing listens on.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "http://" + addr + "/bucket/ws/key?" + signedQuery
}

// requireNoURL checks that no part of a presigned URL leaked into a line.
func requireNoURL(t *testing.T, line, url string) {
	t.Helper()
	require.NotContains(t, line, url)
	require.NotContains(t, line, "X-Amz")
	require.NotContains(t, line, "5ec2e7f00d")
	require.NotContains(t, line, "/bucket/ws/key")
}

// skipUnlessCI skips a test that needs a privilege this process lacks, but
// fails it under CI=true, where the tests run as root and must all run.
func skipUnlessCI(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format+" (skipped outside CI)", args...)
}
