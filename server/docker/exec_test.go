package docker_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/google/uuid"
	"github.com/gorilla/websocket"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/wsexec"
)

func (b *shellBundle) execSpec(argv ...string) service.ExecSpec {
	id, wsID := ulid.Make().String(), uuid.NewString()
	return service.ExecSpec{
		Name: b.app + ".exec." + wsID + "." + id, ExecID: id, WorkspaceID: wsID, WorkspaceName: "ws-alpha",
		VolumeName: b.volume, TokenName: "ops", Argv: argv,
		Expires: time.Unix(time.Now().Add(time.Hour).Unix(), 0),
	}
}

func createExec(t *testing.T, s *docker.Shells, spec service.ExecSpec) wsexec.Process {
	t.Helper()
	p, err := s.CreateExec(t.Context(), spec)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() }) // idempotent; Serve closes it
	return p
}

// serveExec serves p behind an httptest server and dials it.
func serveExec(t *testing.T, p wsexec.Process) (*websocket.Conn, <-chan wsexec.ServeResult) {
	t.Helper()
	results := make(chan wsexec.ServeResult, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{Subprotocols: []string{wsexec.Subprotocol}}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		// Serve's ctx is the server's life, as the service gives it: the
		// request's context ends when the client goes (net/http cancels it
		// on a read error through the hijacked reader), which is no
		// shutdown.
		results <- wsexec.Serve(context.WithoutCancel(r.Context()), conn, p, wsexec.ServeOptions{DrainTimeout: testDrainTimeout})
	}))
	t.Cleanup(srv.Close)
	d := websocket.Dialer{Subprotocols: []string{wsexec.Subprotocol}}
	conn, resp, err := d.DialContext(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	require.NoError(t, err)
	resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() })
	return conn, results
}

func served(t *testing.T, results <-chan wsexec.ServeResult) wsexec.ServeResult {
	t.Helper()
	select {
	case r := <-results:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return")
		return wsexec.ServeResult{}
	}
}

// runExec runs argv with stdin and returns its status and both outputs.
func runExec(t *testing.T, s *docker.Shells, spec service.ExecSpec, stdin io.Reader) (wsexec.Status, string, string) {
	t.Helper()
	conn, results := serveExec(t, createExec(t, s, spec))
	var out, errOut bytes.Buffer
	st, err := wsexec.Run(t.Context(), conn, stdin, &out, &errOut, wsexec.RunOptions{})
	require.NoError(t, err, "stdout %q, stderr %q", out.String(), errOut.String())
	served(t, results)
	return st, out.String(), errOut.String()
}

func TestExecStreamsApartAndExitCode(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	spec := b.execSpec("sh", "-c", `cat; echo err >&2; exit 7`)
	st, out, errOut := runExec(t, s, spec, strings.NewReader("hello\n"))
	require.Equal(t, wsexec.Status{ExitCode: 7, Reason: wsexec.ReasonExited, Message: "the command exited with status 7"}, st)
	require.Equal(t, "hello\n", out, "cat ended: stdin was half-closed")
	require.Equal(t, "err\n", errOut)
	require.Zero(t, countByLabel(t, b, docker.LabelExec+"="+spec.ExecID), "the container is gone")
}

func TestExecBinaryStdinRoundTrip(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	in := make([]byte, 8<<20+3)
	_, _ = rand.Read(in)
	sum := sha256.Sum256(in)
	st, out, _ := runExec(t, s, b.execSpec("sha256sum"), bytes.NewReader(in))
	require.Equal(t, 0, st.ExitCode)
	require.Equal(t, hex.EncodeToString(sum[:])+"  -\n", out)
}

func TestExecNoSuchCommand(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	st, _, errOut := runExec(t, s, b.execSpec("/no/such/command"), nil)
	require.Equal(t, 127, st.ExitCode, "stderr %q", errOut)
}

func TestExecClientKilledLeavesNoContainer(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{StopSecs: 1})
	spec := b.execSpec("sleep", "600")
	conn, results := serveExec(t, createExec(t, s, spec))
	require.Eventually(t, func() bool { return running(t, b, spec.ExecID) }, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, conn.NetConn().Close()) // no close frame: the client was killed
	res := served(t, results)
	require.Equal(t, wsexec.ReasonClientGone, res.Reason)
	require.Zero(t, countByLabel(t, b, docker.LabelExec+"="+spec.ExecID))
}

func TestExecHardening(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	script := strings.Join([]string{
		`echo "pid1=$(tr '\0' ' ' </proc/1/cmdline)"`,
		`touch /mnt/cairn/ws/probe && echo ws=rw`,
		`touch /probe 2>/dev/null || echo root=ro`,
		`echo "ifaces=$(ls /sys/class/net | tr '\n' ' ')"`,
		`grep CapEff /proc/self/status`,
		`echo "uid=$(id -u)"`,
		`[ -t 0 ] || echo notty`,
		`pwd`,
	}, "; ")
	spec := b.execSpec("sh", "-c", script)
	p := createExec(t, s, spec)
	list, err := s.ListExecs(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, spec.ExecID, list[0].ShellID)
	require.Equal(t, b.instance, list[0].Instance)
	info, err := b.cli.ContainerInspect(t.Context(), list[0].ContainerID)
	require.NoError(t, err)
	cfg, hc := info.Config, info.HostConfig
	require.Equal(t, "/"+spec.Name, info.Name)
	for k, v := range map[string]string{
		"cairn.app": b.app, "cairn.kind": "exec", "cairn.exec": spec.ExecID, "cairn.workspace": spec.WorkspaceID,
		"cairn.instance": b.instance, "cairn.token": "ops", "cairn.expires": strconv.FormatInt(spec.Expires.Unix(), 10),
	} {
		require.Equal(t, v, cfg.Labels[k], "label %s", k)
	}
	require.Empty(t, cfg.Labels[docker.LabelShell], "not a shell: the shell reaper leaves it alone")
	require.Equal(t, []string{"sh"}, []string(cfg.Entrypoint))
	require.False(t, cfg.Tty)
	require.True(t, cfg.OpenStdin && cfg.StdinOnce && cfg.AttachStdin && cfg.AttachStdout && cfg.AttachStderr)
	require.Equal(t, "0:0", cfg.User)
	require.True(t, hc.ReadonlyRootfs)
	require.True(t, *hc.Init)
	require.Equal(t, []string{"ALL"}, capsOf(hc.CapDrop))
	require.Equal(t, []string{"DAC_OVERRIDE"}, capsOf(hc.CapAdd))
	require.Equal(t, []string{"no-new-privileges"}, hc.SecurityOpt)
	require.Equal(t, container.NetworkMode("none"), hc.NetworkMode)
	require.Equal(t, int64(512<<20), hc.Memory)
	require.Equal(t, int64(256), *hc.PidsLimit)
	require.Equal(t, "none", hc.LogConfig.Type)
	require.False(t, hc.Privileged)
	require.Len(t, hc.Mounts, 1)
	require.True(t, hc.Mounts[0].VolumeOptions.NoCopy)

	conn, results := serveExec(t, p)
	var out bytes.Buffer
	st, err := wsexec.Run(t.Context(), conn, nil, &out, io.Discard, wsexec.RunOptions{})
	require.NoError(t, err)
	served(t, results)
	require.Equal(t, 0, st.ExitCode, "output %q", out.String())
	require.Regexp(t, `pid1=/sbin/docker-init -- sh -c`, out.String())
	for _, want := range []string{"ws=rw", "root=ro", "ifaces=lo \n", "uid=0", "notty", cairn.MountPath + "\n"} {
		require.Contains(t, out.String(), want)
	}
	require.Regexp(t, `CapEff:\s+0000000000000002`, out.String())
}

func countByLabel(t *testing.T, b *shellBundle, label string) int {
	t.Helper()
	list, err := b.cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: labelFilter(label)})
	require.NoError(t, err)
	return len(list)
}

func running(t *testing.T, b *shellBundle, execID string) bool {
	t.Helper()
	list, err := b.cli.ContainerList(t.Context(), container.ListOptions{Filters: labelFilter(docker.LabelExec + "=" + execID)})
	require.NoError(t, err)
	return len(list) == 1 && list[0].State == "running"
}
