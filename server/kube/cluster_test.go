//go:build kube

package kube_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// testClusterEnv names a cluster of its own, apart from a developer's
// `make k8s-up` one: its own state dir, ports, bridge and pod network.
func testClusterEnv(state string) []string {
	return append(os.Environ(),
		"CAIRN_K8S_STATE="+state,
		"CAIRN_K8S_BRIDGE=cairnk8st0",
		"CAIRN_K8S_POD_CIDR=10.244.78.0/24",
		"CAIRN_K8S_APISERVER_PORT=27443",
		"CAIRN_K8S_ETCD_PORT=27379",
		"CAIRN_K8S_KUBELET_PORT=27250",
		"CAIRN_K8S_KUBELET_HEALTHZ_PORT=27248",
		"CAIRN_K8S_CM_PORT=27257",
		"CAIRN_K8S_SCHEDULER_PORT=27259",
		"CAIRN_K8S_IMAGES=",
		"CAIRN_K8S_NODES=2",
	)
}

// hostState is what the cluster may change on the host and must put back.
type hostState struct {
	sysctls map[string]string
	present []string // of hostPaths
	links   []string
	cgroups []string // the kubelets' hierarchies
	runCtrd []string // entries of /run/containerd, which Docker's containerd shares
	forward []string // the FORWARD chain's rules
}

var (
	watchedSysctls = []string{"vm/overcommit_memory", "vm/panic_on_oom", "kernel/panic", "kernel/panic_on_oops",
		"kernel/keys/root_maxkeys", "kernel/keys/root_maxbytes", "net/ipv4/ip_forward"}
	hostPaths = []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/var/lib/cni", "/etc/cni",
		"/opt/cni", "/var/lib/containerd", "/etc/kubernetes", "/run/netns"}
)

func readHost(t *testing.T) hostState {
	t.Helper()
	h := hostState{sysctls: map[string]string{}}
	for _, s := range watchedSysctls {
		b, err := os.ReadFile("/proc/sys/" + s)
		require.NoError(t, err)
		h.sysctls[s] = strings.TrimSpace(string(b))
	}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); err == nil {
			h.present = append(h.present, p)
		}
	}
	out, err := exec.Command("ip", "-o", "link", "show").Output()
	require.NoError(t, err)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 1 && !strings.HasPrefix(f[1], "veth") {
			h.links = append(h.links, f[1]) // Docker's veths come and go with other tests
		}
	}
	h.cgroups, _ = filepath.Glob("/sys/fs/cgroup/*/kubepods")
	second, _ := filepath.Glob("/sys/fs/cgroup/*/cairn-node-b")
	h.cgroups = append(h.cgroups, second...)
	rules, err := exec.Command("iptables", "-w", "-S", "FORWARD").Output()
	require.NoError(t, err)
	h.forward = strings.Split(strings.TrimSpace(string(rules)), "\n")
	entries, _ := os.ReadDir("/run/containerd")
	for _, e := range entries {
		if e.Name() != "s" { // shim sockets: Docker's come and go
			h.runCtrd = append(h.runCtrd, e.Name())
		}
	}
	return h
}

// processesUnder lists the processes whose command line names dir.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var found []string
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(dir)) {
			found = append(found, strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	var found []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			found = append(found, f[4])
		}
	}
	return found
}

func script(t *testing.T, env []string, name string) (string, time.Duration) {
	t.Helper()
	cmd := exec.Command(filepath.Join("..", "..", "scripts", name))
	cmd.Env = env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	require.NoError(t, err, "%s:\n%s", name, out)
	return string(out), took
}

// TestClusterUpDown brings a real two-node cluster up over a killed one's
// leftover link, sees its nodes Ready, takes it down and checks that the
// host is as it was: no process, mount (node B's network namespace among
// them), bridge, link, forwarding rule, cgroup or path of the cluster
// left, every tunable restored.
func TestClusterUpDown(t *testing.T) {
	if os.Geteuid() != 0 {
		requireOrSkip(t, "the local cluster needs root")
	}
	state := filepath.Join(t.TempDir(), "k8s")
	env := testClusterEnv(state)
	before := readHost(t)
	t.Cleanup(func() {
		if _, err := os.Stat(state); err == nil {
			down := exec.Command(filepath.Join("..", "..", "scripts", "k8s-down.sh"))
			down.Env = env
			_, _ = down.CombinedOutput()
		}
	})

	// A cluster of these names that was killed, not taken down, left node
	// B's veth on the host; up must not trip over it, and down removes it.
	stale, err := exec.Command("ip", "link", "add", "cairnk8st0b", "type", "veth", "peer", "name", "cairnk8st0x").CombinedOutput()
	require.NoError(t, err, string(stale))

	out, took := script(t, env, "k8s-up.sh")
	t.Logf("up: %s\n%s", took, out)
	kubeconfig := filepath.Join(state, "admin.kubeconfig")
	require.Contains(t, out, kubeconfig)
	for _, node := range []string{"cairn-node", "cairn-node-b"} {
		ready, err := exec.Command(kubectl(t), "--kubeconfig", kubeconfig, "get", "node", node,
			"-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`).CombinedOutput()
		require.NoError(t, err, string(ready))
		require.Equal(t, "True", string(ready), "node %s", node)
	}
	during := readHost(t)
	require.Contains(t, during.links, "cairnk8st0b@if2:", "node B's link is up")
	require.NotEqual(t, before.forward, during.forward, "pod traffic between the nodes is let through")

	out, took = script(t, env, "k8s-up.sh")
	require.Contains(t, out, "already up")
	t.Logf("up again: %s", took)

	out, took = script(t, env, "k8s-down.sh")
	t.Logf("down: %s\n%s", took, out)
	require.Empty(t, processesUnder(t, state), "processes of the cluster left")
	require.Empty(t, mountsUnder(t, state), "mounts under the state dir left")
	require.NoDirExists(t, state)
	after := readHost(t)
	require.Equal(t, before.sysctls, after.sysctls)
	require.Equal(t, before.present, after.present)
	require.Equal(t, before.cgroups, after.cgroups)
	require.Equal(t, before.runCtrd, after.runCtrd)
	require.Equal(t, before.forward, after.forward)
	require.False(t, slices.Contains(after.links, "cairnk8st0:"), "the bridge is left")
	require.Equal(t, before.links, after.links)

	out, _ = script(t, env, "k8s-down.sh")
	require.Contains(t, out, "nothing to take down")
}
