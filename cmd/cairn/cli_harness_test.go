package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// cliServer is a real `cairn server` process on the real stack, and what
// the CLI tests need to run the built binary against it and to look behind
// its back.
type cliServer struct {
	url    string
	token  string
	bin    string
	app    string
	bucket string
	gw     *stack.S3
	cmd    *exec.Cmd
	out    *stacktest.SyncBuffer
}

// The server's tokens: every scope, and read only.
const (
	cliAdminToken = "cli-test-admin-0123456789abcdef0123"
	cliReadToken  = "cli-test-reader-0123456789abcdef0123"
)

// startCLIServer runs `cairn server` from the built binary with its own
// database, bucket and app name, on a free loopback port.
func startCLIServer(t testing.TB) *cliServer {
	t.Helper()
	return startCLIServerWith(t, "")
}

// startCLIServerWith is startCLIServer with more of the server's config:
// extra, YAML of top-level keys the base config does not set.
func startCLIServerWith(t testing.TB, extra string) *cliServer {
	t.Helper()
	dir, err := binaries()
	require.NoError(t, err)
	pg := stacktest.Postgres(t)
	dsn := stacktest.Database(t)
	port, err := stack.FreePort()
	require.NoError(t, err)
	s := &cliServer{url: "http://127.0.0.1:" + strconv.Itoa(port), token: cliAdminToken, bin: filepath.Join(dir, "cairn"),
		app: stacktest.AppName(t), bucket: stacktest.Bucket(t), gw: stacktest.S3(t), out: &stacktest.SyncBuffer{}}
	hash := func(tok string) string { sum := sha256.Sum256([]byte(tok)); return hex.EncodeToString(sum[:]) }
	cfg := filepath.Join(t.TempDir(), "server.yaml")
	yaml := fmt.Sprintf(`appName: %s
persistence: {sql: {app: {host: 127.0.0.1, port: %d, db: %s, user: %s}}}
metrics: {service: {listenOn: 127.0.0.1, appPort: 0}}
api: {service: {listenOn: 127.0.0.1, appPort: %d}}
artifact:
  s3: {endpoint: "%s", useTLS: false, region: us-east-1}
  store: {bucket: %s, maxObjectSize: %d}
  sidecar: {image: %s, networkMode: host}
auth:
  tokens:
    - {name: admin, sha256: %s, scopes: [read, write, admin]}
    - {name: reader, sha256: %s, scopes: [read]}
%s`, s.app, pg.Port, dsn[strings.LastIndex(dsn, "/")+1:strings.Index(dsn, "?")], pg.User, port, s.gw.Endpoint,
		s.bucket, 2<<30, stacktest.Image(t), hash(cliAdminToken), hash(cliReadToken), extra)
	require.NoError(t, os.WriteFile(cfg, []byte(yaml), 0o600))
	s.cmd = exec.Command(s.bin, "server", "-c", cfg)
	s.cmd.Env = append(os.Environ(), "CAIRN_APP_SQL_PASSWORD="+pg.Password,
		"CAIRN_S3_ACCESS_KEY="+s.gw.AccessKey, "CAIRN_S3_SECRET_KEY="+s.gw.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	require.NoError(t, s.cmd.Start())
	t.Cleanup(func() { s.stop(t) })
	s.waitReady(t)
	return s
}

func (s *cliServer) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, s.url+"/liveness/ready", nil)
		require.NoError(t, err)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if stacktest.Exited(s.cmd.Process) {
			_ = s.cmd.Wait() // reaps it and copies the last of its output
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("cairn server did not become ready; output:\n%s", s.out)
}

// stop ends the server with Ctrl-C, as an operator would.
func (s *cliServer) stop(t testing.TB) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGINT))
	_ = s.cmd.Wait() // an interrupted server exits non-zero or zero; either is fine here
}

// result is one run of the CLI.
type result struct {
	stdout, stderr string
	code           int
	maxRSS         int64 // bytes, the peak resident set of the process (VmHWM)
}

// cli runs the built binary with args, the server and the admin token in
// its environment and an empty config directory.
func (s *cliServer) cli(t testing.TB, args ...string) result {
	t.Helper()
	return s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": s.token}, args...)
}

// cliIn is cli in the working directory dir.
func (s *cliServer) cliIn(t testing.TB, dir string, args ...string) result {
	t.Helper()
	cmd := s.command(t.Context(), map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": s.token}, args...)
	cmd.Dir = dir
	return s.finish(t, cmd, args)
}

// cliInput is cli with stdin reading in.
func (s *cliServer) cliInput(t testing.TB, in io.Reader, args ...string) result {
	t.Helper()
	cmd := s.command(t.Context(), map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": s.token}, args...)
	cmd.Stdin = in
	return s.finish(t, cmd, args)
}

// cliEnv runs the built binary with exactly env (plus PATH and HOME) and
// XDG_CONFIG_HOME an empty directory unless env names one.
func (s *cliServer) cliEnv(t testing.TB, env map[string]string, args ...string) result {
	t.Helper()
	return s.finish(t, s.command(t.Context(), env, args...), args)
}

// finish runs cmd to its end and collects its result.
func (s *cliServer) finish(t testing.TB, cmd *exec.Cmd, args []string) result {
	t.Helper()
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

func (s *cliServer) command(ctx context.Context, env map[string]string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	if _, ok := env["XDG_CONFIG_HOME"]; !ok {
		cmd.Env = append(cmd.Env, "XDG_CONFIG_HOME="+filepath.Join(os.TempDir(), "cairn-cli-test-no-config"))
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// watchPeakRSS samples the process's VmHWM, the kernel's high-water mark
// of its resident set, every 10 ms until the returned function is called
// (after the process ended); that returns the last mark read, in bytes.
// The wait4 rusage is no use here: across exec it keeps the peak of the
// forking test binary.
func watchPeakRSS(pid int) func() int64 {
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			if hwm, ok := vmHWM(pid); ok {
				peak.Store(max(peak.Load(), hwm))
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 {
		close(stop)
		<-done
		return peak.Load()
	}
}

func vmHWM(pid int) (int64, bool) {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// ok runs the CLI and requires exit 0.
func (s *cliServer) ok(t testing.TB, args ...string) result {
	t.Helper()
	r := s.cli(t, args...)
	require.Equal(t, 0, r.code, "cairn %v: stderr: %s", args, r.stderr)
	return r
}

// fails runs the CLI and requires the exit code.
func (s *cliServer) fails(t testing.TB, code int, args ...string) result {
	t.Helper()
	r := s.cli(t, args...)
	require.Equal(t, code, r.code, "cairn %v: stdout: %s stderr: %s", args, r.stdout, r.stderr)
	require.Contains(t, r.stderr, "cairn: ", "the reason is on stderr")
	return r
}

// json runs the CLI with -o json and decodes its one document.
func (s *cliServer) json(t testing.TB, args ...string) map[string]json.RawMessage {
	t.Helper()
	r := s.ok(t, append(args, "-o", "json")...)
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	require.NoError(t, dec.Decode(&doc), "stdout: %s", r.stdout)
	require.False(t, dec.More(), "one document")
	return doc
}

// rest sends one REST request with the admin token and returns the payload
// of its envelope: the fields besides success and request_id.
func (s *cliServer) rest(t testing.TB, method, path string) map[string]json.RawMessage {
	t.Helper()
	return s.restBody(t, method, path, "")
}

// restBody is rest with a JSON body.
func (s *cliServer) restBody(t testing.TB, method, path, body string) map[string]json.RawMessage {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s %s: %s", method, path, answer)
	var env map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(answer, &env))
	delete(env, "success")
	delete(env, "request_id")
	return env
}

// mint asks for a staging slot for the file of that digest and size.
func (s *cliServer) mint(t testing.TB, wsID string, size int64, sum string) cairn.Staging {
	t.Helper()
	doc := s.restBody(t, http.MethodPost, "/v1/workspaces/"+wsID+"/new-staging",
		fmt.Sprintf(`{"size":%d,"sha256_b64":%q}`, size, sum))
	return field[cairn.Staging](t, doc, "staging")
}

// register registers a staged object.
func (s *cliServer) register(t testing.TB, wsID, key, name string) {
	t.Helper()
	s.restBody(t, http.MethodPost, "/v1/workspaces/"+wsID+"/artifacts",
		fmt.Sprintf(`{"staging_object_key":%q,"name":%q}`, key, name))
}

// requireSameJSON compares two documents as JSON values.
func requireSameJSON(t testing.TB, want, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	g, err := json.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(w), string(g))
}

// field decodes one field of a document.
func field[T any](t testing.TB, doc map[string]json.RawMessage, key string) T {
	t.Helper()
	var v T
	require.Contains(t, doc, key)
	require.NoError(t, json.Unmarshal(doc[key], &v))
	return v
}

// putObject overwrites an object in the store behind cairn's back.
func (s *cliServer) putObject(t testing.TB, key string, body []byte) {
	t.Helper()
	_, err := s.gw.Client().PutObject(t.Context(), &awss3.PutObjectInput{Bucket: aws.String(s.bucket),
		Key: aws.String(key), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
	require.NoError(t, err)
}

// randomFile writes n pseudo-random bytes to a new file in dir and
// returns its path and the standard base64 of its SHA-256.
func randomFile(t testing.TB, dir, name string, n int64) (string, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	return path, stacktest.RandomFile(t, path, byte(n>>20)^byte(n), n)
}
