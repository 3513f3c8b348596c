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
	Maintainer bool   // --with-maintainer
	Config     string // more YAML config, appended (top-level keys not set here)
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

	cmd *exec.Cmd
	out *syncBuffer
}

// StartServer runs `cairn server` on a free loopback port until the test
// ends (then Ctrl-C), waiting until it is ready.
func StartServer(t testing.TB, o ServerOptions) *Server {
	t.Helper()
	bin := Binary(t, "cairn")
	pg := Postgres(t)
	port, err := stack.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://127.0.0.1:" + strconv.Itoa(port), Token: AdminToken, App: AppName(t),
		Bucket: Bucket(t), Database: Database(t), S3: S3(t), out: &syncBuffer{}}
	sum := sha256.Sum256([]byte(AdminToken))
	db := s.Database[strings.LastIndex(s.Database, "/")+1 : strings.Index(s.Database, "?")]
	cfg := filepath.Join(t.TempDir(), "server.yaml")
	yaml := fmt.Sprintf(`appName: %s
persistence: {sql: {app: {host: 127.0.0.1, port: %d, db: %s, user: %s}}}
metrics: {service: {listenOn: 127.0.0.1, appPort: 0}}
api: {service: {listenOn: 127.0.0.1, appPort: %d}}
artifact:
  s3: {endpoint: "%s", useTLS: false, region: us-east-1}
  store: {bucket: %s}
  sidecar: {image: %s, networkMode: host}
auth:
  tokens:
    - {name: admin, sha256: %s, scopes: [read, write, admin, shell, mcp]}
%s`, s.App, pg.Port, db, pg.User, port, s.S3.Endpoint, s.Bucket, Image(t), hex.EncodeToString(sum[:]), o.Config)
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"server", "-c", cfg}
	if o.Maintainer {
		args = append(args, "--with-maintainer")
	}
	s.cmd = exec.Command(bin, args...) //nolint:noctx // stopped with Ctrl-C at cleanup, as an operator would
	s.cmd.Env = append(os.Environ(), "CAIRN_APP_SQL_PASSWORD="+pg.Password,
		"CAIRN_S3_ACCESS_KEY="+s.S3.AccessKey, "CAIRN_S3_SECRET_KEY="+s.S3.SecretKey)
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	s.waitReady(t)
	return s
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
		if s.cmd.ProcessState != nil {
			break
		}
		time.Sleep(100 * time.Millisecond) // polling a probe: nothing else announces readiness
	}
	t.Fatalf("cairn server did not become ready; output:\n%s", s.out)
}

// Output is what the server printed so far.
func (s *Server) Output() string { return s.out.String() }

func (s *Server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	_ = s.cmd.Wait() // an interrupted server may exit non-zero; the test has its answers
}

// syncBuffer is an output sink safe for a process's writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}
