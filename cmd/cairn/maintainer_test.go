package main

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// maintainerProcess is one `cairn maintainer` run by a test.
type maintainerProcess struct {
	cmd     *exec.Cmd
	metrics string // base URL of its metrics listener
}

// startMaintainer runs the real binary as `cairn maintainer` with cfg and
// waits for its metrics listener.
func startMaintainer(t *testing.T, cfg string, env []string) *maintainerProcess {
	t.Helper()
	dir, err := binaries()
	require.NoError(t, err)
	cmd := exec.Command(filepath.Join(dir, "cairn"), "maintainer", "-c", cfg, "-l", "info")
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGINT) //nolint:errcheck // may be gone already
		cmd.Wait()                         //nolint:errcheck // the test killed it, or it stopped
	})
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`metrics=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case a := <-addr:
		return &maintainerProcess{cmd: cmd, metrics: "http://" + a}
	case <-time.After(60 * time.Second):
		t.Fatal("cairn maintainer did not start")
		return nil
	}
}

// leader reads the process's cairn_reconcile_leader gauge.
func (m *maintainerProcess) leader(t *testing.T) bool {
	t.Helper()
	resp, err := http.Get(m.metrics + "/metrics")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(body), "\ncairn_reconcile_leader 1\n")
}

func TestMaintainerReplicas(t *testing.T) {
	pg := stacktest.Postgres(t)
	dsn := stacktest.Database(t)
	db := dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	store := stacktest.S3(t)
	image := stacktest.Image(t)
	app := stacktest.AppName(t)
	cfg := writeConfig(t, fmt.Sprintf(`appName: %s
persistence: {sql: {app: {host: 127.0.0.1, port: %d, db: %s, user: %s}}}
metrics: {service: {listenOn: 127.0.0.1, appPort: 0}}
api: {service: {listenOn: 127.0.0.1, appPort: 0}}
artifact:
  s3: {endpoint: "%s", useTLS: false, region: us-east-1}
  store: {bucket: %s, putUrlTTLSecs: 5}
  sidecar: {image: %s}
maintenance: {sweepIntSec: 1, objAgeOutSec: 70}
`, app, pg.Port, db, pg.User, store.Endpoint, stacktest.Bucket(t), image))
	env := []string{"CAIRN_APP_SQL_PASSWORD=" + pg.Password, "CAIRN_S3_ACCESS_KEY=" + store.AccessKey,
		"CAIRN_S3_SECRET_KEY=" + store.SecretKey}

	a, b := startMaintainer(t, cfg, env), startMaintainer(t, cfg, env)
	if !assertEventually(func() bool { return a.leader(t) != b.leader(t) }, 20*time.Second) {
		resp, err := http.Get(a.metrics + "/metrics")
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Fatalf("no single leader; a=%v b=%v; a's metrics:\n%s", a.leader(t), b.leader(t), body)
	}
	leader, other := a, b
	if b.leader(t) {
		leader, other = b, a
	}
	for _, m := range []*maintainerProcess{a, b} {
		resp, err := http.Get(m.metrics + "/liveness/ready")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}

	require.NoError(t, leader.cmd.Process.Kill())
	start := time.Now()
	require.Eventually(t, func() bool { return other.leader(t) }, 20*time.Second, 100*time.Millisecond,
		"the other replica takes over")
	t.Logf("takeover after the leader was killed: %s (interval 1 s)", time.Since(start).Round(10*time.Millisecond))
}

func assertEventually(cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}
