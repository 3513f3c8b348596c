package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/wsexec"
)

// execRun is one run of `cairn exec`.
type execRun struct {
	stdout, stderr string
	code           int
}

// cairnExec runs the built binary's exec against s with token and stdin.
func (st *shellStack) cairnExec(t testing.TB, s *shellServer, token string, stdin io.Reader, args ...string) execRun {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), st.bin, append([]string{"exec"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "CAIRN_URL=" + s.url, "CAIRN_TOKEN=" + token,
		"XDG_CONFIG_HOME=" + filepath.Join(os.TempDir(), "cairn-cli-test-no-config")}
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &stdout, &stderr
	err := cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("run cairn exec %v: %v", args, err)
	}
	return execRun{stdout: stdout.String(), stderr: stderr.String(), code: cmd.ProcessState.ExitCode()}
}

// execContainers counts the app's exec containers.
func (st *shellStack) execContainers(t testing.TB) int {
	t.Helper()
	list, err := st.docker.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+st.app), filters.Arg("label", "cairn.kind=exec"))})
	require.NoError(t, err)
	return len(list)
}

func TestExecEndToEnd(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	t.Cleanup(func() { st.noExecContainers(t) })
	ws := a.readyWorkspace(t)

	t.Run("OKStreamsApartAndExitStatus", func(t *testing.T) {
		r := st.cairnExec(t, a, shellAdminToken, strings.NewReader(""), ws.Name, "--",
			"sh", "-c", "echo out; echo err >&2; exit 7", "secret-arg-"+ws.ID)
		require.Equal(t, 7, r.code, "stderr %q", r.stderr)
		require.Equal(t, "out\n", r.stdout)
		require.Equal(t, "err\n", r.stderr)
		started, ended := execRows(t, a, ws.ID)
		require.Equal(t, "sh", started["argv0"])
		require.Equal(t, "sh", ended["argv0"])
		require.Equal(t, started["exec_id"], ended["exec_id"])
		require.InDelta(t, 7, ended["exit_code"], 0)
		require.Equal(t, string(wsexec.ReasonExited), ended["reason"])
		for _, row := range []map[string]any{started, ended} {
			b, err := json.Marshal(row)
			require.NoError(t, err)
			require.NotContains(t, string(b), "echo out", "no argv beyond argv0 in the audit")
			require.NotContains(t, string(b), "secret-arg")
		}
		require.NotContains(t, a.out.String(), "secret-arg", "no argv in the server's log")
	})

	t.Run("OK100MiBThroughSha256sum", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "in")
		f, err := os.Create(path)
		require.NoError(t, err)
		h := sha256.New()
		_, err = io.CopyN(io.MultiWriter(f, h), rand.Reader, 100<<20)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		in, err := os.Open(path)
		require.NoError(t, err)
		defer in.Close()
		r := st.cairnExec(t, a, shellAdminToken, in, ws.ID, "--", "sha256sum")
		require.Equal(t, 0, r.code, "stderr %q", r.stderr)
		require.Equal(t, hex.EncodeToString(h.Sum(nil))+"  -\n", r.stdout)
		require.Empty(t, r.stderr)
	})

	t.Run("OKNoStdin", func(t *testing.T) {
		r := st.cairnExec(t, a, shellAdminToken, strings.NewReader("never read\n"), "-n", ws.ID, "--", "cat")
		require.Equal(t, 0, r.code)
		require.Empty(t, r.stdout)
	})

	t.Run("OKTeardownRightAfter", func(t *testing.T) {
		own := a.readyWorkspace(t)
		r := st.cairnExec(t, a, shellAdminToken, strings.NewReader(""), own.Name, "--", "true")
		require.Equal(t, 0, r.code, "stderr %q", r.stderr)
		// The container went before the status did: "cairn exec ws -- cmd
		// && cairn ws teardown ws" finds the volume free (it was refused
		// every time while the container went after the status).
		require.NoError(t, a.admin.TeardownVolume(t.Context(), own.ID))
	})

	t.Run("ErrUsageWithoutDash", func(t *testing.T) {
		r := st.cairnExec(t, a, shellAdminToken, nil, ws.ID, "true")
		require.Equal(t, 2, r.code)
	})

	t.Run("ErrRefusedBeforeTheUpgrade", func(t *testing.T) {
		idle, err := a.admin.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-idle-" + strings.ToLower(randomToken())})
		require.NoError(t, err)
		argv, err := wsexec.EncodeArgv([]string{"true"})
		require.NoError(t, err)
		st.noExecContainers(t) // the earlier runs' teardowns follow their status
		for name, c := range map[string]struct {
			wsID, token, argv string
			status            int
			reason            cairn.Reason
		}{
			"VolumeNotReady": {idle.ID, shellAdminToken, argv, http.StatusConflict, cairn.ReasonVolumeNotReady},
			"NoShellScope":   {ws.ID, shellNoShellToken, argv, http.StatusForbidden, cairn.ReasonForbidden},
			"UnknownWS":      {uuid.NewString(), shellAdminToken, argv, http.StatusNotFound, cairn.ReasonWorkspaceNotFound},
			"NoArgv":         {ws.ID, shellAdminToken, "", http.StatusBadRequest, cairn.ReasonInvalidParameters},
		} {
			t.Run(name, func(t *testing.T) {
				status, env, _ := a.rawShellRequest(t, "/v1/workspaces/"+c.wsID+"/exec", func(r *http.Request) {
					r.Header.Set("Sec-WebSocket-Protocol", wsexec.Subprotocol)
					r.Header.Set("Authorization", "Bearer "+c.token)
					if c.argv != "" {
						r.Header.Set(wsexec.ArgvHeader, c.argv)
					}
				})
				require.Equal(t, c.status, status)
				require.Equal(t, string(c.reason), env["error"].(map[string]any)["reason"])
			})
		}
		r := st.cairnExec(t, a, shellNoShellToken, nil, ws.ID, "--", "true")
		require.Equal(t, 5, r.code, "the CLI exits 5 on 403: %q", r.stderr)
		require.Zero(t, st.execContainers(t), "no container for a refusal")
	})
}

// noExecContainers waits until the app has no exec container: each goes
// in its teardown, just after its status was sent.
func (st *shellStack) noExecContainers(t testing.TB) {
	t.Helper()
	require.Eventually(t, func() bool { return st.execContainers(t) == 0 }, 20*time.Second, 20*time.Millisecond,
		"exec containers left behind")
}

// execRows waits for the last EXEC_STARTED and EXEC_ENDED rows of wsID.
func execRows(t *testing.T, s *shellServer, wsID string) (started, ended map[string]any) {
	t.Helper()
	require.Eventually(t, func() bool {
		events, err := s.admin.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: wsID})
		require.NoError(t, err)
		for _, ev := range events {
			switch ev.Type {
			case cairn.AuditExecStarted:
				started = ev.Metadata
			case cairn.AuditExecEnded:
				ended = ev.Metadata
			}
		}
		return started != nil && ended != nil
	}, 20*time.Second, 50*time.Millisecond, "no EXEC_STARTED/EXEC_ENDED pair for %s", wsID)
	return started, ended
}

// startExec runs `cairn exec WS -- sh -c 'echo started; read line; exit 3'`
// against s in the background and returns it, and its stdin, once the
// command has printed its first line. A line on stdin ends the command.
func (st *shellStack) startExec(t *testing.T, s *shellServer, wsName string) (*exec.Cmd, io.WriteCloser, *stacktest.SyncBuffer) {
	t.Helper()
	cli := exec.Command(st.bin, "exec", wsName, "--", "sh", "-c", "echo start\"\"ed; read line; exit 3")
	cli.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CAIRN_URL=" + s.url, "CAIRN_TOKEN=" + shellAdminToken,
		"XDG_CONFIG_HOME=" + t.TempDir()}
	out, err := cli.StdoutPipe()
	require.NoError(t, err)
	in, err := cli.StdinPipe()
	require.NoError(t, err)
	stderr := &stacktest.SyncBuffer{}
	cli.Stderr = stderr
	require.NoError(t, cli.Start())
	t.Cleanup(func() { _ = cli.Process.Kill(); _ = cli.Wait() }) // ended already when the test got that far
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err, "stderr: %s", stderr.String())
	require.Equal(t, "started\n", line)
	return cli, in, stderr
}

// TestExecEndIsRecordedOnce: an exec whose registry row a replica took (it
// took the serving server for gone, and writes the end itself) gets no
// second EXEC_ENDED from the server that served it when it ends.
func TestExecEndIsRecordedOnce(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	t.Cleanup(func() { st.noExecContainers(t) })
	ws := a.readyWorkspace(t)
	cli, in, _ := st.startExec(t, a, ws.Name)

	conn, err := pgx.Connect(t.Context(), st.pg.DSN(st.db))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	tag, err := conn.Exec(t.Context(), `DELETE FROM execs`) // what a replica's claim does
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected())

	_, err = in.Write([]byte("done\n"))
	require.NoError(t, err)
	var exit *exec.ExitError
	require.ErrorAs(t, cli.Wait(), &exit)
	require.Equal(t, 3, exit.ExitCode(), "the command ran to its end")
	require.Eventually(t, func() bool { return strings.Contains(a.out.String(), "exec ended") }, time.Minute,
		20*time.Millisecond, "the server never finished the exec")
	events, err := a.admin.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: ws.ID,
		Types: []cairn.AuditType{cairn.AuditExecStarted, cairn.AuditExecEnded}})
	require.NoError(t, err)
	require.Len(t, events, 1, "EXEC_STARTED only: %+v", events)
	require.Equal(t, cairn.AuditExecStarted, events[0].Type)
}

// TestExecOfAKilledServerIsEnded: a server killed (SIGKILL) mid-exec cannot
// end its command, and a container left running it would run on unseen
// until it expires. Another replica finds the exec's registry row with its
// server's liveness lapsed, removes the container and records the end:
// terminated, exit code -1, the lost server named. The client sees its
// connection lost.
func TestExecOfAKilledServerIsEnded(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	b := st.start(t, shellServerOpts{})
	t.Cleanup(func() { st.noExecContainers(t) })
	ws := a.readyWorkspace(t)

	cli, _, stderr := st.startExec(t, a, ws.Name)
	require.Equal(t, 1, st.execContainers(t))

	require.NoError(t, a.cmd.Process.Kill(), "replica A dies without a word")
	_ = a.cmd.Wait() // killed
	killed := time.Now()
	require.Eventually(t, func() bool { return st.execContainers(t) == 0 }, time.Minute, 50*time.Millisecond,
		"replica B removes the exec's container")
	t.Logf("the exec's container went %s after its server was killed (reaper interval 1 s)", time.Since(killed).Round(100*time.Millisecond))
	_, ended := execRows(t, b, ws.ID)
	require.Equal(t, string(wsexec.ReasonTerminated), ended["reason"])
	require.InDelta(t, -1, ended["exit_code"], 0)
	require.Equal(t, a.instance, ended["server_lost"])
	require.Equal(t, "sh", ended["argv0"])

	err := cli.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "the client ends with its connection")
	require.Equal(t, 255, exit.ExitCode(), "the connection lost (docs/cli.md); stderr: %s", stderr.String())
}
