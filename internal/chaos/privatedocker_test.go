//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// privateDocker is a Docker Engine of the test's own — its data root,
// exec root, pidfile and socket under one temporary directory, a bridge
// of its own and no iptables rules — so that a scenario can kill and
// restart an engine without touching the one the machine's other tests
// run on. Not --bridge=none: a dockerd so started deletes the host's
// docker0, the shared engine's bridge.
type privateDocker struct {
	base   string // every path of the engine is under it
	bridge string // its bridge interface, made for it
	cmd    *exec.Cmd
	// exited is closed once the running dockerd has exited and was reaped.
	exited chan struct{}
	log    *os.File
	cli    *client.Client
}

// startPrivateDocker starts a private dockerd and waits until it answers.
// When the test ends its containers are removed, the engine stopped, its
// leftover processes killed, its mounts undone and its directory removed.
func startPrivateDocker(t *testing.T) *privateDocker {
	t.Helper()
	if _, err := exec.LookPath("dockerd"); err != nil {
		stacktest.Need(t, "dockerd", err)
	}
	// Not t.TempDir: the engine's unix sockets need a short path.
	base, err := os.MkdirTemp("", "cairn-dockerd-")
	require.NoError(t, err)
	d := &privateDocker{base: base}
	t.Cleanup(func() { d.teardown(t) })
	d.makeBridge(t)
	require.NoError(t, os.WriteFile(d.path("daemon.json"), []byte("{}\n"), 0o600))
	d.log, err = os.Create(d.path("dockerd.log"))
	require.NoError(t, err)
	d.start(t)
	d.cli, err = client.NewClientWithOpts(client.WithHost(d.Host()), client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	return d
}

func (d *privateDocker) path(name string) string { return filepath.Join(d.base, name) }

// Host is the engine's address in DOCKER_HOST's form.
func (d *privateDocker) Host() string { return "unix://" + d.path("docker.sock") }

// start runs dockerd on the engine's directories and waits until it
// answers; after kill it comes back on the same data root, finding the
// containers the dead one left. A dockerd that gives up starting (it
// waits 15 s for its containerd, which a loaded machine can outlast) is
// started again, as a service manager would.
func (d *privateDocker) start(t *testing.T) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		d.cmd = exec.Command("dockerd", //nolint:noctx // killed by the scenario or stopped at cleanup
			"--config-file", d.path("daemon.json"),
			"--data-root", d.path("data"),
			"--exec-root", d.path("exec"),
			"--pidfile", d.path("dockerd.pid"),
			"-H", d.Host(),
			"--bridge="+d.bridge, "--iptables=false", "--ip6tables=false", "--ip-masq=false", "--ip-forward=false",
			"--userland-proxy=false", "--log-level=warn")
		d.cmd.Stdout, d.cmd.Stderr = d.log, d.log
		require.NoError(t, d.cmd.Start())
		exited := make(chan struct{})
		d.exited = exited
		go func() { _ = d.cmd.Wait(); close(exited) }() // its status is in its log
		err := d.waitReady(t)
		if err == nil {
			return
		}
		if !d.hasExited() || attempt == 3 {
			t.Fatalf("the private dockerd did not answer: %v; its log:\n%s", err, d.logTail())
		}
		t.Logf("the private dockerd exited before it answered (%v); starting it again", err)
	}
}

// makeBridge makes the engine's bridge: a name and a /24 of 10.231.0.0/16
// of its own (the base directory's random suffix picks them).
func (d *privateDocker) makeBridge(t *testing.T) {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(d.base), "cairn-dockerd-"))
	require.NoError(t, err)
	d.bridge = fmt.Sprintf("cairnc%d", n%100000)
	for _, args := range [][]string{
		{"link", "add", d.bridge, "type", "bridge"},
		{"addr", "add", fmt.Sprintf("10.231.%d.1/24", n%250), "dev", d.bridge},
		{"link", "set", d.bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil { //nolint:noctx // a quick netlink call
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
}

// waitReady polls the socket (nothing else announces an engine's
// readiness) for a minute, or until dockerd exits.
func (d *privateDocker) waitReady(t *testing.T) error {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.WithHost(d.Host()), client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	defer cli.Close()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, err = cli.Ping(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-d.exited:
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
	return err
}

func (d *privateDocker) hasExited() bool {
	select {
	case <-d.exited:
		return true
	default:
		return false
	}
}

// kill ends dockerd with SIGKILL, as a crash or the OOM killer would, and
// reaps it. The containers' shims outlive it.
func (d *privateDocker) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, d.cmd.Process.Kill())
	<-d.exited
	for _, pid := range d.strays() {
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		t.Logf("outlived dockerd: %d %s", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
}

// loadImages builds the sidecar and shell images from the current source
// into the engine, as `make images` would on a host.
func (d *privateDocker) loadImages(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	root, err := stack.ModuleRoot()
	require.NoError(t, err)
	bin := d.path("cairn-sidecar")
	require.NoError(t, stack.BuildSidecarBinary(ctx, root, bin))
	binary, err := os.ReadFile(bin)
	require.NoError(t, err)
	require.NoError(t, stack.EnsureImage(ctx, d.cli, stacktest.SidecarImage, stack.SidecarImage(binary)))
	shell, err := stack.ShellImage()
	require.NoError(t, err)
	require.NoError(t, stack.EnsureImage(ctx, d.cli, stacktest.ShellImage, shell))
}

// containers lists the engine's containers of app, running or not.
func (d *privateDocker) containers(t *testing.T, app string) []container.Summary {
	t.Helper()
	list, err := d.cli.ContainerList(t.Context(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+app))})
	require.NoError(t, err)
	return list
}

// leakedContainers is the suite's leaked-container count for this engine.
func (d *privateDocker) leakedContainers(t *testing.T, app string) int {
	t.Helper()
	list := d.containers(t, app)
	for _, c := range list {
		t.Errorf("leaked container %s %s (%s, %s)", c.ID[:12], strings.Join(c.Names, ","), c.Labels["cairn.role"], c.State)
	}
	return len(list)
}

// teardown leaves nothing of the engine behind, whatever state the test
// left it in: its containers, dockerd, the containerd and shims it
// started, their mounts and the directory.
func (d *privateDocker) teardown(t *testing.T) {
	if d.cmd != nil && !d.hasExited() {
		d.removeAll(t)
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.exited:
		case <-time.After(30 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.exited
		}
	}
	if d.cli != nil {
		d.cli.Close()
	}
	if d.log != nil {
		d.log.Close()
	}
	for _, pid := range d.strays() {
		t.Logf("private dockerd: killing stray process %d", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, m := range d.mounts() {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
			t.Errorf("unmount %s: %v", m, err)
		}
	}
	if d.bridge != "" {
		if out, err := exec.Command("ip", "link", "del", d.bridge).CombinedOutput(); err != nil { //nolint:noctx // a quick netlink call
			t.Errorf("remove the private dockerd's bridge %s: %v: %s", d.bridge, err, out)
		}
	}
	if err := os.RemoveAll(d.base); err != nil {
		t.Errorf("remove the private dockerd's directory: %v", err)
	}
}

// removeAll force-removes every container of the engine.
func (d *privateDocker) removeAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true})
	if err != nil {
		t.Logf("private dockerd: list containers: %v", err)
		return
	}
	for _, c := range list {
		if err := d.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Logf("private dockerd: remove container %s: %v", c.ID[:12], err)
		}
	}
}

// strays are the processes still running whose command line names the
// engine's directory: its containerd and the containers' shims, which
// address that containerd's socket.
func (d *privateDocker) strays() []int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var pids []int
	for _, p := range procs {
		cmdline, err := os.ReadFile(p)
		if err != nil || !strings.Contains(string(cmdline), d.base+"/") {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil && pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// mounts are the mount points under the engine's directory, deepest
// first: overlay layers, the container network namespaces, the data
// root's own private bind.
func (d *privateDocker) mounts() []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && strings.HasPrefix(fields[4], d.base+"/") {
			out = append(out, fields[4])
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// logTail is the end of dockerd's log, for a failure's message.
func (d *privateDocker) logTail() string {
	b, _ := os.ReadFile(d.path("dockerd.log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
