package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// proxiedStack is a real server whose presigned URLs go through a
// counting proxy, and the built CLI with a state directory of its own.
type proxiedStack struct {
	srv   *stacktest.Server
	proxy *stacktest.StoreProxy
	bin   string
	state string // XDG_STATE_HOME
}

func startProxiedStack(t testing.TB, o stacktest.ServerOptions) *proxiedStack {
	t.Helper()
	proxy := stacktest.StartStoreProxy(t, stacktest.S3(t).Endpoint)
	o.PresignEndpoint = proxy.Addr()
	srv := stacktest.StartServer(t, o)
	return &proxiedStack{srv: srv, proxy: proxy, bin: stacktest.Binary(t, "cairn"), state: t.TempDir()}
}

func (s *proxiedStack) command(t testing.TB, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), s.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "CAIRN_URL=" + s.srv.URL,
		"CAIRN_TOKEN=" + s.srv.Token, "XDG_STATE_HOME=" + s.state,
		"XDG_CONFIG_HOME=" + filepath.Join(os.TempDir(), "cairn-cli-test-no-config")}
	return cmd
}

// run runs the CLI to its end.
func (s *proxiedStack) run(t testing.TB, args ...string) result {
	t.Helper()
	cmd := s.command(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	peak := watchPeakRSS(cmd.Process.Pid)
	err := cmd.Wait()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("run cairn %v: %v", args, err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode(), maxRSS: peak()}
}

func (s *proxiedStack) ok(t testing.TB, args ...string) result {
	t.Helper()
	r := s.run(t, args...)
	require.Equal(t, 0, r.code, "cairn %v: stderr: %s", args, r.stderr)
	return r
}

// killWhen runs the CLI and kills it (SIGKILL: no cleanup of any kind)
// once moved() reaches at; it returns what the process printed.
func (s *proxiedStack) killWhen(t testing.TB, moved func() int64, at int64, args ...string) string {
	t.Helper()
	cmd := s.command(t, args...)
	out := &stacktest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(5 * time.Minute)
	for moved() < at {
		select {
		case err := <-exited:
			t.Fatalf("cairn %v ended before the cut (%v): %s", args, err, out)
		default:
		}
		require.True(t, time.Now().Before(deadline), "cairn %v moved %d bytes of the %d awaited: %s", args, moved(), at, out)
		time.Sleep(5 * time.Millisecond) // polling a byte count: nothing else announces it
	}
	require.NoError(t, cmd.Process.Kill())
	require.Error(t, <-exited, "a killed process exits with its signal")
	return out.String()
}

// rest sends one REST request with the server's token and decodes the
// envelope's payload; it returns the status too.
func (s *proxiedStack) rest(t testing.TB, method, path string) (int, map[string]json.RawMessage) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.srv.URL+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.srv.Token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var doc map[string]json.RawMessage
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
	return resp.StatusCode, doc
}

// pendingState is the client's resume state of the one unfinished upload
// in the stack's state directory.
type pendingState struct {
	Key      string `json:"staging_object_key"`
	UploadID string `json:"upload_id"`
	PartSize int64  `json:"part_size"`
	Parts    int    `json:"part_count"`
}

func (s *proxiedStack) pending(t testing.TB) pendingState {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(s.state, "cairn", "uploads", "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one unfinished upload")
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the state is the user's alone")
	dir, err := os.Stat(filepath.Dir(files[0]))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), dir.Mode().Perm())
	data, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var st pendingState
	require.NoError(t, json.Unmarshal(data, &st))
	return st
}

// storedBytes is what the store holds of the upload, as the server lists
// it; status is the listing's HTTP status.
func (s *proxiedStack) storedBytes(t testing.TB, wsID string, st pendingState) (status int, parts int, bytes int64) {
	t.Helper()
	q := url.Values{"staging_object_key": {st.Key}, "upload_id": {st.UploadID}}
	status, doc := s.rest(t, http.MethodGet, "/v1/workspaces/"+wsID+"/new-staging/parts?"+q.Encode())
	if status != http.StatusOK {
		return status, 0, 0
	}
	for _, p := range field[[]cairn.UploadedPart](t, doc, "parts") {
		bytes += p.Size
		parts++
	}
	return status, parts, bytes
}

func (s *proxiedStack) noPending(t testing.TB) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(s.state, "cairn", "uploads", "*.json"))
	require.NoError(t, err)
	require.Empty(t, files, "the state goes once the artifact is registered")
}

// slack is what a resumed transfer may move beyond the missing bytes:
// request and answer headers.
const slack = 1 << 20

// A 2 GiB upload killed (SIGKILL) halfway resumes when the same command
// runs again and sends only the parts the store lacks, plus at most one
// part; then a download of it killed halfway resumes from DEST.part and
// fetches only the missing ranges. Both end verified.
func TestCLIResumeAfterKill(t *testing.T) {
	t.Parallel()
	const size = 2 << 30
	s := startProxiedStack(t, stacktest.ServerOptions{MaxObjectSize: 3 << 30})
	dir := t.TempDir()
	wsName := uniqueName("resume")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	src, sum := randomFile(t, dir, "big.bin", size)
	upload := []string{"art", "upload", wsName, src, "--name", "big", "-o", "json"}

	// Upload: cut at half of the bytes through the proxy.
	start := time.Now()
	s.killWhen(t, s.proxy.Up, size/2, upload...)
	firstRun := time.Since(start)
	st := s.pending(t)
	require.Equal(t, 32, st.Parts, "64 MiB parts")
	status, storedParts, stored := s.storedBytes(t, ws.ID, st)
	require.Equal(t, http.StatusOK, status)
	require.Positive(t, storedParts)
	missing := int64(size) - stored
	t.Logf("killed after %s with %d of 32 parts stored (%d MiB sent)", firstRun.Round(time.Millisecond), storedParts, s.proxy.Up()>>20)

	s.proxy.Reset()
	start = time.Now()
	r := s.ok(t, upload...)
	t.Logf("resumed in %s: sent %d MiB for %d MiB missing; peak RSS %.1f MiB", time.Since(start).Round(time.Millisecond),
		s.proxy.Up()>>20, missing>>20, float64(r.maxRSS)/(1<<20))
	require.Regexp(t, regexp.MustCompile(`resumed: \d+ of 32 parts already stored`), r.stderr)
	require.LessOrEqual(t, s.proxy.Up(), missing+st.PartSize+slack, "only the missing parts went up")
	a := field[cairn.Artifact](t, decodeOne(t, r.stdout), "artifact")
	require.Equal(t, sum, *a.SHA256B64, "the digest of the whole file")
	require.Equal(t, int64(size), a.Size)
	require.Less(t, r.maxRSS, int64(64<<20), "memory does not grow with the file")
	s.noPending(t)

	// Download: cut at half of the bytes back through the proxy.
	dest := filepath.Join(dir, "back.bin")
	download := []string{"art", "download", a.ID, dest, "-o", "json"}
	s.proxy.Reset()
	s.killWhen(t, s.proxy.Down, size/2, download...)
	require.FileExists(t, dest+".part")
	require.NoFileExists(t, dest)
	have := rangesDone(t, dest+".part.json")
	require.Positive(t, have)

	s.proxy.Reset()
	start = time.Now()
	r = s.ok(t, download...)
	t.Logf("download resumed in %s: received %d MiB for %d MiB missing; peak RSS %.1f MiB", time.Since(start).Round(time.Millisecond),
		s.proxy.Down()>>20, (size-have)>>20, float64(r.maxRSS)/(1<<20))
	require.Regexp(t, regexp.MustCompile(`resumed: \d+ of 128 parts already downloaded`), r.stderr)
	require.LessOrEqual(t, s.proxy.Down(), size-have+slack, "only the missing ranges came")
	require.Less(t, r.maxRSS, int64(64<<20))
	require.Equal(t, sum, stacktest.FileSHA256(t, dest))
	require.NoFileExists(t, dest+".part")
	require.NoFileExists(t, dest+".part.json")
}

// rangesDone is the bytes a download's sidecar records complete.
func rangesDone(t testing.TB, path string) int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var side struct {
		Size      int64    `json:"size"`
		RangeSize int64    `json:"range_size"`
		Done      [][2]int `json:"done"`
	}
	require.NoError(t, json.Unmarshal(data, &side))
	var n int64
	for _, run := range side.Done {
		for i := run[0]; i < run[1]; i++ {
			n += min(side.RangeSize, side.Size-int64(i)*side.RangeSize)
		}
	}
	return n
}

// A file changed between an interrupted upload and the next run: the old
// upload is aborted, the new run starts over and says so, and the artifact
// holds the new bytes.
func TestCLIUploadSourceChanged(t *testing.T) {
	t.Parallel()
	s := startProxiedStack(t, stacktest.ServerOptions{})
	dir := t.TempDir()
	wsName := uniqueName("changed")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	src, _ := randomFile(t, dir, "data.bin", 200<<20)
	upload := []string{"art", "upload", wsName, src, "--name", "data", "--parallel", "1", "--rate-limit", "64MiB",
		"--multipart-above", "64MiB", "-o", "json"}
	// Cut inside the second part's body: no part is in flight whole, so
	// none completes behind the abort.
	s.killWhen(t, s.proxy.Up, 80<<20, upload...)
	st := s.pending(t)

	next, nextSum := randomFile(t, t.TempDir(), "next.bin", 150<<20)
	require.NoError(t, os.Rename(next, src), "a new file in its place")

	r := s.ok(t, "art", "upload", wsName, src, "--name", "data", "--multipart-above", "64MiB", "-o", "json")
	require.Contains(t, r.stderr, "source changed since the interrupted upload; starting over")
	a := field[cairn.Artifact](t, decodeOne(t, r.stdout), "artifact")
	require.Equal(t, nextSum, *a.SHA256B64)
	status, _, _ := s.storedBytes(t, ws.ID, st)
	require.Equal(t, http.StatusBadRequest, status, "the old upload was aborted")
	s.noPending(t)
}

// json runs the CLI with -o json and decodes its one document.
func (s *proxiedStack) json(t testing.TB, args ...string) map[string]json.RawMessage {
	t.Helper()
	return decodeOne(t, s.ok(t, append(args, "-o", "json")...).stdout)
}

func decodeOne(t testing.TB, out string) map[string]json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(out))
	require.NoError(t, dec.Decode(&doc), "stdout: %s", out)
	require.False(t, dec.More(), "one document")
	return doc
}
