//go:build chaos

package chaos

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// cliUser runs the built `cairn` CLI against a server as one user would:
// the server's URL and token in the environment and state and config
// directories of its own, kept across runs so that a command run again
// finds what the interrupted run left.
type cliUser struct {
	bin   string
	srv   *stacktest.Server
	state string // XDG_STATE_HOME
	home  string
}

func newCLIUser(t *testing.T, srv *stacktest.Server) *cliUser {
	t.Helper()
	return &cliUser{bin: stacktest.Binary(t, "cairn"), srv: srv, state: t.TempDir(), home: t.TempDir()}
}

// run is one CLI process, started by start.
type run struct {
	args           []string
	cmd            *exec.Cmd
	stdout, stderr *stacktest.SyncBuffer
	done           chan struct{} // closed once it ended
	code           int           // its exit code, once done
}

// start starts the CLI with args; it ends on its own (or with the test).
func (u *cliUser) start(t *testing.T, args ...string) *run {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), u.bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + u.home, "CAIRN_URL=" + u.srv.URL,
		"CAIRN_TOKEN=" + u.srv.Token, "XDG_STATE_HOME=" + u.state, "XDG_CONFIG_HOME=" + filepath.Join(u.home, "config")}
	r := &run{args: args, cmd: cmd, stdout: &stacktest.SyncBuffer{}, stderr: &stacktest.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = r.stdout, r.stderr
	require.NoError(t, cmd.Start())
	go func() {
		defer close(r.done)
		_ = cmd.Wait() // the exit code is the answer
		r.code = cmd.ProcessState.ExitCode()
	}()
	return r
}

// wait waits for the run to end and returns its exit code.
func (r *run) wait() int {
	<-r.done
	return r.code
}

// running reports whether the process has not ended yet.
func (r *run) running() bool {
	select {
	case <-r.done:
		return false
	default:
		return true
	}
}

// ok runs the CLI to its end and requires exit 0; it returns the run.
func (u *cliUser) ok(t *testing.T, args ...string) *run {
	t.Helper()
	r := u.start(t, args...)
	require.Equal(t, 0, r.wait(), "cairn %v: stdout: %s stderr: %s", args, r.stdout, r.stderr)
	return r
}

// json decodes the one JSON document a run printed (-o json).
func (r *run) json(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.stdout.String()))
	require.NoError(t, dec.Decode(v), "cairn %v: stdout: %s", r.args, r.stdout)
	require.False(t, dec.More(), "one document")
}
