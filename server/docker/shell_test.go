package docker_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
)

// shellBundle is what a shell test needs beside the runtime.
type shellBundle struct {
	app, instance, volume string
	cli                   *client.Client
}

// setupShells returns a shell runtime for a unique app and instance, with
// the busybox image and a fresh volume of the app (both removed at
// cleanup). cfg's AppName, Image and Instance are filled in.
func setupShells(t *testing.T, cfg docker.ShellConfig) (*docker.Shells, *shellBundle) {
	t.Helper()
	cli := stacktest.Docker(t)
	b := &shellBundle{app: stacktest.AppName(t), cli: cli}
	b.instance, b.volume = "inst-"+b.app, b.app+"-ws"
	cfg.AppName, cfg.Image, cfg.Instance = b.app, stacktest.Shell(t), b.instance
	_, err := cli.VolumeCreate(t.Context(), volume.CreateOptions{Name: b.volume, Labels: map[string]string{docker.LabelApp: b.app}})
	require.NoError(t, err)
	return docker.NewShells(cli, cfg), b
}

func (b *shellBundle) spec() service.ShellSpec {
	id, wsID := ulid.Make().String(), uuid.NewString()
	return service.ShellSpec{
		Name: b.app + ".shell." + wsID + "." + id, ShellID: id, WorkspaceID: wsID, WorkspaceName: "ws-alpha",
		VolumeName: b.volume, TokenName: "ops", Term: "xterm-256color", Cols: 120, Rows: 40,
		Expires: time.Unix(time.Now().Add(time.Hour).Unix(), 0),
	}
}

// testDrainTimeout bounds how long a shell's exit status may trail the end
// of its output. A loaded engine (CI runs every package at once) has been
// seen to take longer than the 2 s default, which no test here is about.
const testDrainTimeout = 30 * time.Second

// create makes the container of spec; Close runs at cleanup at the latest.
func create(t *testing.T, s *docker.Shells, spec service.ShellSpec) ptyshell.Stream {
	t.Helper()
	st, err := s.CreateShell(t.Context(), spec)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() }) // idempotent; Serve may have closed it
	return st
}

// serve runs ptyshell.Serve over st and dials it. running reads the two
// STATUS frames, after which only OUTPUT comes until the end.
func serve(t *testing.T, st ptyshell.Stream, size ptyshell.Size) (conn *ptyshelltest.Conn, running func()) {
	t.Helper()
	srv := ptyshelltest.NewServer(t, st, ptyshell.ServeOptions{Size: size, DrainTimeout: testDrainTimeout})
	conn = ptyshelltest.Dial(t, srv.URL)
	return conn, func() {
		t.Helper()
		for _, state := range []string{ptyshell.StateStarting, ptyshell.StateRunning} {
			f, err := conn.Next()
			require.NoError(t, err)
			require.Equal(t, ptyshell.FrameStatus, f.Type)
			var st ptyshell.Status
			require.NoError(t, ptyshell.DecodeControl(f.Payload, &st))
			require.Equal(t, state, st.State)
		}
	}
}

// countByShell counts the containers carrying the shell's label.
func countByShell(t *testing.T, cli *client.Client, shellID string) int {
	t.Helper()
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: labelFilter(docker.LabelShell + "=" + shellID)})
	require.NoError(t, err)
	return len(list)
}

func TestShellContainerSpec(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{Env: []string{"EDITOR=vi"}})
	spec := b.spec()
	create(t, s, spec)

	list, err := s.ListShells(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	info, err := b.cli.ContainerInspect(t.Context(), list[0].ContainerID)
	require.NoError(t, err)
	cfg, hc := info.Config, info.HostConfig

	require.Equal(t, "/"+spec.Name, info.Name)
	for k, v := range map[string]string{
		"cairn.app": b.app, "cairn.kind": "shell", "cairn.role": "shell", "cairn.shell": spec.ShellID,
		"cairn.workspace": spec.WorkspaceID, "cairn.instance": b.instance, "cairn.token": "ops",
		"cairn.expires": strconv.FormatInt(spec.Expires.Unix(), 10),
	} {
		require.Equal(t, v, cfg.Labels[k], "label %s", k)
	}
	require.Equal(t, []string{"/bin/sh"}, []string(cfg.Entrypoint))
	require.Equal(t, []string{"-c", "umask 0000; if command -v bash >/dev/null 2>&1; then exec bash; fi; exec sh"}, []string(cfg.Cmd))
	require.Equal(t, []string{
		"TERM=xterm-256color", "LANG=C.UTF-8", "HOME=/home/cairn", "CAIRN_WORKSPACE_ID=" + spec.WorkspaceID,
		"CAIRN_WORKSPACE_NAME=ws-alpha", "CAIRN_SHELL_ID=" + spec.ShellID, "EDITOR=vi",
	}, cfg.Env[:7])
	require.Equal(t, cairn.MountPath, cfg.WorkingDir)
	require.Equal(t, "0:0", cfg.User)
	require.True(t, cfg.Tty && cfg.OpenStdin && cfg.AttachStdin && cfg.AttachStdout && cfg.AttachStderr)
	require.False(t, cfg.StdinOnce)
	require.Equal(t, "SIGHUP", cfg.StopSignal)
	require.NotNil(t, cfg.StopTimeout)
	require.Equal(t, 3, *cfg.StopTimeout)

	require.True(t, hc.ReadonlyRootfs)
	require.NotNil(t, hc.Init)
	require.True(t, *hc.Init)
	require.Equal(t, []string{"ALL"}, capsOf(hc.CapDrop))
	require.Equal(t, []string{"DAC_OVERRIDE"}, capsOf(hc.CapAdd))
	require.Equal(t, []string{"no-new-privileges"}, hc.SecurityOpt)
	require.Equal(t, container.NetworkMode("none"), hc.NetworkMode)
	require.Equal(t, int64(512<<20), hc.Memory)
	require.Equal(t, int64(512<<20), hc.MemorySwap)
	require.Equal(t, int64(1e9), hc.NanoCPUs)
	require.NotNil(t, hc.PidsLimit)
	require.Equal(t, int64(256), *hc.PidsLimit)
	require.Len(t, hc.Ulimits, 1)
	require.Equal(t, container.Ulimit{Name: "nofile", Soft: 1024, Hard: 1024}, *hc.Ulimits[0])
	require.Equal(t, map[string]string{
		"/tmp": "rw,nosuid,nodev,size=64m,mode=1777", "/home/cairn": "rw,nosuid,nodev,size=64m,mode=1777",
	}, hc.Tmpfs)
	require.Equal(t, "none", hc.LogConfig.Type)
	require.False(t, hc.AutoRemove)
	require.False(t, hc.Privileged)
	require.Empty(t, hc.Binds)
	require.Empty(t, hc.PortBindings)
	require.Equal(t, []mount.Mount{{Type: mount.TypeVolume, Source: b.volume, Target: cairn.MountPath,
		VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}, hc.Mounts, "one mount, without copy-up")

	require.Equal(t, spec.Name, list[0].Name)
	require.Equal(t, spec.ShellID, list[0].ShellID)
	require.Equal(t, spec.WorkspaceID, list[0].WorkspaceID)
	require.Equal(t, b.instance, list[0].Instance)
	require.Equal(t, "ops", list[0].TokenName)
	require.Equal(t, "created", list[0].State)
	require.True(t, spec.Expires.Equal(list[0].Expires))
}

func TestShellInsideTheContainer(t *testing.T) {
	t.Parallel()
	script := strings.Join([]string{
		`echo "pid1=$(tr '\0' ' ' </proc/1/cmdline)"`,
		`touch /mnt/cairn/ws/probe && echo ws=rw`,
		`touch /probe 2>/dev/null || echo root=ro`,
		`touch "$HOME/probe" && echo home=rw`,
		`echo "ifaces=$(ls /sys/class/net | tr '\n' ' ')"`,
		`grep CapEff /proc/self/status`,
		`echo "uid=$(id -u)"`,
	}, "; ")
	s, b := setupShells(t, docker.ShellConfig{Entrypoint: []string{"/bin/sh", "-c", script}})
	conn, _ := serve(t, create(t, s, b.spec()), ptyshell.Size{Cols: 200, Rows: 50})

	tr := conn.Collect()
	require.Equal(t, 1, tr.Exits, "transcript: %q, err %v", tr.Output, tr.Err)
	require.Equal(t, 0, tr.Exit.ExitCode, "output: %q", tr.Output)
	out := string(tr.Output)
	require.Regexp(t, `pid1=/sbin/docker-init -- /bin/sh -c`, out, "PID 1 is the init")
	for _, want := range []string{"ws=rw", "root=ro", "home=rw", "ifaces=lo \r", "uid=0"} {
		require.Contains(t, out, want)
	}
	// DAC_OVERRIDE is capability 1: the mask is 1<<1 and nothing else.
	require.Regexp(t, `CapEff:\s+0000000000000002`, out)
}

func TestShellEchoRoundTrip(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	conn, running := serve(t, create(t, s, b.spec()), ptyshell.Size{Cols: 120, Rows: 40})
	running()

	token := strings.ToLower(ulid.Make().String())
	// The quotes keep the typed line, which the terminal echoes, from
	// matching: only the command's output reads hello-<token>.
	require.NoError(t, conn.SendInput([]byte(`echo hel""lo-`+token+"\r")))
	_, err := conn.ReadOutput("hello-" + token)
	require.NoError(t, err)
	require.NoError(t, conn.SendInput([]byte("exit\r")))
	tr := conn.Collect()
	require.Equal(t, ptyshell.Exit{ExitCode: 0, Reason: ptyshell.ReasonExited, Message: "the shell exited with status 0"}, tr.Exit)
	require.Equal(t, 1000, tr.CloseCode)
}

func TestShellSize(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	conn, running := serve(t, create(t, s, b.spec()), ptyshell.Size{Cols: 120, Rows: 40})
	running()

	// stty reads the terminal's size only once the first resize landed
	// (ConsoleSize is dropped below API 1.42); the prompt already sees it.
	require.NoError(t, conn.SendInput([]byte("stty size; echo sz-\"\"done\r")))
	out, err := conn.ReadOutput("sz-done")
	require.NoError(t, err)
	require.Contains(t, string(out), "40 120")

	require.NoError(t, conn.SendResize(ptyshell.Size{Cols: 100, Rows: 30}))
	// The resize and the typed line travel independently: the shell waits
	// until the size it sees is the new one, then reports it.
	require.NoError(t, conn.SendInput([]byte(`while [ "$(stty size)" != "30 100" ]; do usleep 20000; done; stty size; echo sz-""again`+"\r")))
	out, err = conn.ReadOutput("sz-again")
	require.NoError(t, err)
	require.Contains(t, string(out), "30 100")
}

func TestShellExitCodes(t *testing.T) {
	t.Parallel()

	t.Run("ExitSeven", func(t *testing.T) {
		t.Parallel()
		s, b := setupShells(t, docker.ShellConfig{})
		conn, _ := serve(t, create(t, s, b.spec()), ptyshell.Size{Cols: 80, Rows: 24})
		require.NoError(t, conn.SendInput([]byte("exit 7\r")))
		tr := conn.Collect()
		require.Equal(t, 7, tr.Exit.ExitCode)
		require.Equal(t, ptyshell.ReasonExited, tr.Exit.Reason)
	})

	t.Run("MissingEntrypoint127", func(t *testing.T) {
		t.Parallel()
		s, b := setupShells(t, docker.ShellConfig{Entrypoint: []string{"/no/such/shell"}})
		conn, _ := serve(t, create(t, s, b.spec()), ptyshell.Size{Cols: 80, Rows: 24})
		tr := conn.Collect()
		require.Equal(t, 127, tr.Exit.ExitCode, "output: %q", tr.Output)
		require.Equal(t, ptyshell.ReasonExited, tr.Exit.Reason)
		require.Contains(t, string(tr.Output), "/no/such/shell", "the init's complaint arrives as output")
	})
}

func TestShellDrainsBeforeExit(t *testing.T) {
	t.Parallel()
	script := `i=0; while [ $i -lt 2000 ]; do echo line$i; i=$((i+1)); done; exit 3`
	s, b := setupShells(t, docker.ShellConfig{Entrypoint: []string{"/bin/sh", "-c", script}})
	// Four at a time: the machine is small and shared.
	var wg sync.WaitGroup
	runs := make(chan int, 20)
	for i := range 20 {
		runs <- i
	}
	close(runs)
	errs := make(chan error, 20)
	for range 4 {
		wg.Go(func() {
			for range runs {
				errs <- drainOnce(t, s, b)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func drainOnce(t *testing.T, s *docker.Shells, b *shellBundle) error {
	st, err := s.CreateShell(t.Context(), b.spec())
	if err != nil {
		return err
	}
	defer func() { _ = st.Close() }() // Serve closed it already; a second call repeats its result
	srv := ptyshelltest.NewServer(t, st, ptyshell.ServeOptions{Size: ptyshell.Size{Cols: 80, Rows: 24}, DrainTimeout: testDrainTimeout})
	tr := ptyshelltest.Dial(t, srv.URL).Collect()
	switch {
	case tr.Exits != 1 || tr.Exit.ExitCode != 3:
		return fmt.Errorf("exit %+v (%d EXIT frames), want code 3", tr.Exit, tr.Exits)
	case !strings.Contains(string(tr.Output), "line1999\r\n"):
		return fmt.Errorf("line1999 missing before EXIT; output ends %q", tail(tr.Output))
	}
	return nil
}

func tail(b []byte) string { return string(b[max(0, len(b)-80):]) }

func TestShellStopAndClose(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	spec := b.spec()
	st := create(t, s, spec)
	ctx := t.Context()
	require.NoError(t, st.Start(ctx))
	readUntil(t, st, "#")

	// Under the init, SIGHUP ends an interactive sh at once: 129, not the
	// SIGKILL (137) that would follow stopSecs.
	start := time.Now()
	require.NoError(t, st.Stop(ctx))
	status, err := st.Wait(ctx)
	require.NoError(t, err)
	require.Equal(t, ptyshell.ExitStatus{Code: 129}, status)
	require.NoError(t, st.Close())
	t.Logf("stop, wait and close took %s", time.Since(start))
	require.Zero(t, countByShell(t, b.cli, spec.ShellID), "Close removes the container")
	require.NoError(t, st.Close(), "Close runs once; a second call returns the first result")
}

func TestShellCloseWhileRunning(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	spec := b.spec()
	st := create(t, s, spec)
	require.NoError(t, st.Start(t.Context()))
	readUntil(t, st, "#")
	start := time.Now()
	require.NoError(t, st.Close())
	t.Logf("close of a running shell took %s", time.Since(start))
	require.Zero(t, countByShell(t, b.cli, spec.ShellID))
	n, err := st.Read(make([]byte, 16))
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF, "Read after Close is EOF")
}

func TestShellRemovedUnderneath(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	spec := b.spec()
	st := create(t, s, spec)
	conn, running := serve(t, st, ptyshell.Size{Cols: 80, Rows: 24})
	running()
	_, err := conn.ReadOutput("#")
	require.NoError(t, err)

	list, err := s.ListShells(t.Context())
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, "running", list[0].State)
	require.NoError(t, s.RemoveContainer(t.Context(), list[0].ContainerID), "as another replica's DELETE does")
	tr := conn.Collect()
	require.Equal(t, ptyshell.ReasonTerminated, tr.Exit.Reason)
	require.Equal(t, ptyshell.CloseTerminated, tr.CloseCode)
	require.NoError(t, s.RemoveContainer(t.Context(), list[0].ContainerID), "an absent container is no error")
}

func TestShellCtrlPPassesAtOnce(t *testing.T) {
	t.Parallel()
	// A raw-mode reader of one byte: with Docker's default detach keys the
	// engine would hold a lone Ctrl-P back until the next key, and this
	// would never end.
	script := `stty raw -echo; echo ready; od -An -tx1 -N1; echo done`
	s, b := setupShells(t, docker.ShellConfig{Entrypoint: []string{"/bin/sh", "-c", script}})
	conn, running := serve(t, create(t, s, b.spec()), ptyshell.Size{Cols: 80, Rows: 24})
	running()
	_, err := conn.ReadOutput("ready")
	require.NoError(t, err)
	require.NoError(t, conn.SendInput([]byte{0x10}))
	tr := conn.Collect()
	require.Equal(t, 0, tr.Exit.ExitCode, "output: %q", tr.Output)
	require.Regexp(t, `\b10\b[\s\S]*done`, string(tr.Output))
}

func TestShellImageMissing(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{})
	missing := docker.NewShells(b.cli, docker.ShellConfig{AppName: b.app, Image: "cairn-shell:absent-" + b.app})
	_, err := missing.CreateShell(t.Context(), b.spec())
	require.Equal(t, cairn.ReasonShellImageMissing, cairn.ErrorReason(err), "err: %v", err)
	require.ErrorContains(t, missing.CheckImage(t.Context()), "make images")
	require.NoError(t, s.CheckImage(t.Context()))
	list, err := s.ListShells(t.Context())
	require.NoError(t, err)
	require.Empty(t, list)
}

func TestShellDockerUnavailable(t *testing.T) {
	t.Parallel()
	cli, err := client.NewClientWithOpts(client.WithHost("unix:///nonexistent.sock"), client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	s := docker.NewShells(cli, docker.ShellConfig{})
	_, err = s.CreateShell(t.Context(), service.ShellSpec{ShellID: "x", WorkspaceID: "w", Cols: 1, Rows: 1})
	require.Equal(t, cairn.ReasonDockerUnavailable, cairn.ErrorReason(err), "err: %v", err)
	_, err = s.ListShells(t.Context())
	require.Equal(t, cairn.ReasonDockerUnavailable, cairn.ErrorReason(err), "err: %v", err)
	require.False(t, cerrdefs.IsNotFound(err))
}

// readUntil reads st's output until want appears.
func readUntil(t *testing.T, st ptyshell.Stream, want string) {
	t.Helper()
	var out []byte
	buf := make([]byte, 4096)
	for !strings.Contains(string(out), want) {
		n, err := st.Read(buf)
		require.NoError(t, err, "output so far: %q", out)
		out = append(out, buf[:n]...)
	}
}

func labelFilter(label string) filters.Args { return filters.NewArgs(filters.Arg("label", label)) }

// capsOf strips the CAP_ prefix some engines add on inspect.
func capsOf(list []string) []string {
	var out []string
	for _, c := range list {
		out = append(out, strings.TrimPrefix(c, "CAP_"))
	}
	return out
}
