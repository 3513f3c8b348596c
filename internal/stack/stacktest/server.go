package stacktest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/internal/stack"
)

// AdminToken is the token of every real server this package starts; it
// carries every scope.
const AdminToken = "stacktest-admin-0123456789abcdef0123456789"

// binaries builds the project's binaries once per test binary.
var binaries struct {
	once sync.Once
	dir  string
	err  error
}

// BinaryAt returns a cairn server binary built from the given commit of
// this repository (a detached worktree), built once and kept in the state
// directory.
func BinaryAt(t testing.TB, commit string) string {
	t.Helper()
	root, err := stack.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	state, err := stateDir()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(state, "bin-"+commit, "cairn")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	tree := filepath.Join(state, "tree-"+commit)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	os.RemoveAll(tree) // a worktree left by an interrupted build
	for _, step := range [][]string{
		{"git", "-C", root, "worktree", "prune"},
		{"git", "-C", root, "worktree", "add", "--force", "--detach", tree, commit},
		{"go", "-C", tree, "build", "-o", bin, "./cmd/cairn"},
		{"git", "-C", root, "worktree", "remove", "--force", tree},
	} {
		cmd := exec.CommandContext(ctx, step[0], step[1:]...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(step, " "), err, out)
		}
	}
	return bin
}

// Binary returns the path of a freshly built project binary ("cairn",
// "cairn-tui", "cairn-sidecar"), built once per test binary from the
// current source.
func Binary(t testing.TB, name string) string {
	t.Helper()
	binaries.once.Do(func() {
		binaries.dir, binaries.err = buildBinaries()
	})
	if binaries.err != nil {
		t.Fatalf("build the binaries: %v", binaries.err)
	}
	return filepath.Join(binaries.dir, name)
}

func buildBinaries() (string, error) {
	root, err := stack.ModuleRoot()
	if err != nil {
		return "", err
	}
	state, err := stateDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(state, "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", dir+"/", "./cmd/cairn", "./cmd/cairn-tui", "./cmd/cairn-sidecar")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return dir, nil
}

// ServerOptions shape a real server process.
type ServerOptions struct {
	Maintainer bool // --with-maintainer
	MCP        bool // api.apis.mcp.enable
	// MCPOrigins are api.apis.mcp.allowedOrigins, with MCP.
	MCPOrigins []string
	Config     string // more YAML config, appended (top-level keys not set here)
	// PresignEndpoint is artifact.s3.presignEndpoint (host:port, or a
	// URL); empty leaves it unset, so presigned URLs name the store's
	// own endpoint.
	PresignEndpoint string
	// MaxObjectSize is artifact.store.maxObjectSize in bytes; 0 leaves the
	// server's default (1 GiB).
	MaxObjectSize int64
	// MultipartThreshold and PartSize are artifact.store.multipartThreshold
	// and artifact.store.partSize in bytes; 0 leaves the server's defaults
	// (256 MiB, 64 MiB).
	MultipartThreshold int64
	PartSize           int64
	// PutURLTTLSecs is artifact.store.putUrlTTLSecs; 0 leaves the
	// server's default (360 s). maintenance.objAgeOutSec must exceed it
	// by a minute, so a short one lets a test wait out the age-out.
	PutURLTTLSecs int
	// Tokens are the bearer tokens the server accepts, each with every
	// scope; nil means AdminToken alone. Server.Token is the first. (Not
	// empty: a server with no tokens on loopback runs without
	// authentication.)
	Tokens []string
	// NoAuth runs the server without authentication (no auth block; it
	// listens on loopback only), as `cairn dev --no-auth` does; Tokens is
	// then ignored.
	NoAuth bool
	// Binary runs this cairn binary instead of the one built from the
	// current source: a server of another commit, for side-by-side
	// benchmarks.
	Binary string
	// Replicated runs the server on database cairn of this pair (see
	// Replicated), naming both servers in persistence.sql.app.hosts,
	// instead of on a fresh database of the shared cluster.
	Replicated *stack.Replicated
}

// Server is a real `cairn server` process of the built binary on its own
// database, bucket and app name, with the admin token.
type Server struct {
	URL      string
	Token    string
	App      string
	Bucket   string
	Database string // the database's URL, to look behind the server's back
	S3       *stack.S3

	port  int
	pg    *stack.Postgres
	hosts []string // persistence.sql.app.hosts, if set
	dir   string   // where its config files are written
	cmd   *exec.Cmd
	out   *SyncBuffer
	runs  int // processes started so far
}

// StartServer runs `cairn server` on a free loopback port until the test
// ends (then Ctrl-C), waiting until it is ready.
func StartServer(t testing.TB, o ServerOptions) *Server {
	t.Helper()
	Binary(t, "cairn")
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), App: AppName(t),
		Bucket: Bucket(t), S3: S3(t), port: port, dir: t.TempDir(), out: &SyncBuffer{}}
	if pair := o.Replicated; pair != nil {
		// The URL names both servers: it reaches the promoted standby too.
		s.pg, s.hosts, s.Database = pair.Primary, pair.Hosts(), pair.DSN(pair.Primary.Database)
	} else {
		s.pg, s.Database = Postgres(t), Database(t)
	}
	s.launch(t, o)
	t.Cleanup(s.stop)
	return s
}

// Restart stops the server process (Ctrl-C, as an operator would) and
// starts a new one with o on the same port, database, bucket and app
// name, waiting until it is ready. Clients of the old process see their
// connections drop and the same URL answer again — with o's tokens: the
// server reads its tokens only at start, so this is how a token is
// revoked under a running client.
func (s *Server) Restart(t testing.TB, o ServerOptions) {
	t.Helper()
	s.stop()
	s.launch(t, o)
}

// launch writes the config for o and starts one server process.
func (s *Server) launch(t testing.TB, o ServerOptions) {
	t.Helper()
	tokens := o.Tokens
	if tokens == nil {
		tokens = []string{AdminToken}
	}
	if len(tokens) == 0 && !o.NoAuth {
		t.Fatal("stacktest: ServerOptions.Tokens is empty; the server would run without authentication")
	}
	var auth strings.Builder
	if o.NoAuth {
		tokens = nil
		s.Token = ""
	} else {
		s.Token = tokens[0]
		auth.WriteString("auth:\n  tokens:\n")
	}
	for i, tok := range tokens {
		sum := sha256.Sum256([]byte(tok))
		fmt.Fprintf(&auth, "    - {name: token%d, sha256: %s, scopes: [read, write, admin, shell, mcp]}\n", i, hex.EncodeToString(sum[:]))
	}
	presign := ""
	if o.PresignEndpoint != "" {
		presign = fmt.Sprintf(", presignEndpoint: %q", o.PresignEndpoint)
	}
	maxSize := ""
	if o.MaxObjectSize != 0 {
		maxSize = fmt.Sprintf(", maxObjectSize: %d", o.MaxObjectSize)
	}
	if o.MultipartThreshold != 0 {
		maxSize += fmt.Sprintf(", multipartThreshold: %d", o.MultipartThreshold)
	}
	if o.PartSize != 0 {
		maxSize += fmt.Sprintf(", partSize: %d", o.PartSize)
	}
	if o.PutURLTTLSecs != 0 {
		maxSize += fmt.Sprintf(", putUrlTTLSecs: %d", o.PutURLTTLSecs)
	}
	mcp := ""
	if o.MCP {
		mcp = fmt.Sprintf(", apis: {mcp: {enable: true, allowedOrigins: [%s]}}", strings.Join(o.MCPOrigins, ", "))
	}
	db := s.Database[strings.LastIndex(s.Database, "/")+1 : strings.Index(s.Database, "?")]
	if len(s.hosts) > 0 {
		db += fmt.Sprintf(", hosts: [%s]", strings.Join(s.hosts, ", "))
	}
	s.runs++
	cfg := filepath.Join(s.dir, fmt.Sprintf("server-%d.yaml", s.runs))
	yaml := fmt.Sprintf(`appName: %s
persistence: {sql: {app: {host: 127.0.0.1, port: %d, db: %s, user: %s}}}
metrics: {service: {listenOn: 127.0.0.1, appPort: 0}}
api: {service: {listenOn: 127.0.0.1, appPort: %d}%s}
artifact:
  s3: {endpoint: "%s", useTLS: false, region: us-east-1%s}
  store: {bucket: %s%s}
  sidecar: {image: %s, networkMode: host}
%s%s`, s.App, s.pg.Port, db, s.pg.User, s.port, mcp, s.S3.Endpoint, presign, s.Bucket, maxSize, Image(t), auth.String(), o.Config)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"server", "-c", cfg}
	if o.Maintainer {
		args = append(args, "--with-maintainer")
	}
	bin := o.Binary
	if bin == "" {
		bin = Binary(t, "cairn")
	}
	s.cmd = exec.Command(bin, args...) //nolint:noctx // stopped with Ctrl-C at cleanup, as an operator would
	s.cmd.Env = append(os.Environ(), "CAIRN_APP_SQL_PASSWORD="+s.pg.Password,
		"CAIRN_S3_ACCESS_KEY="+s.S3.AccessKey, "CAIRN_S3_SECRET_KEY="+s.S3.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.waitReady(t)
}

func (s *Server) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.URL+"/liveness/ready", nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if Exited(s.cmd.Process) {
			_ = s.cmd.Wait() // reaps it and copies the last of its output; the status is reported below
			t.Fatalf("cairn server exited before it was ready (%s); output:\n%s", s.cmd.ProcessState, s.out)
		}
		time.Sleep(100 * time.Millisecond) // polling a probe: nothing else announces readiness
	}
	t.Fatalf("cairn server did not become ready; output:\n%s", s.out)
}

// Exited reports whether a started child process has ended, without
// reaping it: a readiness loop can stop waiting at once, while
// exec.Cmd.ProcessState stays unset until Wait, which the caller still owes.
func Exited(p *os.Process) bool {
	var info unix.Siginfo // zero: WNOHANG leaves it so while the process runs
	err := unix.Waitid(unix.P_PID, p.Pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err == nil && info.Signo == int32(unix.SIGCHLD)
}

// Output is what the server printed so far.
func (s *Server) Output() string { return s.out.String() }

// PID is the running server process's ID, to weigh its memory.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Kill ends the server process with SIGKILL, as a crash or the OOM killer
// would, and reaps it; Restart then starts a new one in its place.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		t.Fatal("stacktest: Kill of a server that is not running")
	}
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait() // killed: the exit status says so and nothing more
}

// Terminate sends SIGTERM, as an orchestrator stopping a pod would, waits
// for the process to exit and returns its exit code.
func (s *Server) Terminate(t testing.TB) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait() // the exit code below is the answer
	return s.cmd.ProcessState.ExitCode()
}

func (s *Server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	_ = s.cmd.Wait() // an interrupted server may exit non-zero; the test has its answers
}

// SyncBuffer is a process's output, safe to read while it writes.
type SyncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
