//go:build kube

package main

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/ptyshell"
)

// TestKubernetesNodeLost cuts the power of node B of the suite's two-node
// cluster (scripts/k8s-node.sh: its kubelet, containerd and every process
// of its pods killed at once) under a server with a workspace on each
// node, a shell running on B and artifacts of both. While B is gone: the
// shell is ended as node_lost, a new request for B's workspace is refused
// at once with volume_node_unavailable (never a pod-start timeout), the
// maintainer reports the workspace (volume_issue, and its event), A's
// workspace works, and every artifact downloads with its digest. When B
// comes back, B's workspace works again with its data, with no operator
// step, the report clears, and nothing of cairn's is left on either node.
//
// It must not share the cluster with another test: it is not parallel, and
// the package's other cluster tests are not either.
func TestKubernetesNodeLost(t *testing.T) {
	k := startKubeStack(t, ", nodeLostSecs: 20")
	require.ElementsMatch(t, []string{"cairn-node", "cairn-node-b"}, k.requireNodes(t))
	node := k.nodeScript(t)
	onA, onB := k.workspaceOnEachNode(t)
	for _, ws := range []*cairn.Workspace{onA, onB} {
		k.cli.ok(t, "exec", ws.Name, "--", "sh", "-c", "echo kept on "+ws.Name+" > /mnt/cairn/ws/kept.txt")
	}
	arts := map[string]string{} // artifact ID → the SHA-256 of its content, in base64
	for _, ws := range []*cairn.Workspace{onA, onB} {
		art, err := k.api.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{
			SourcePath: "/mnt/cairn/ws/kept.txt", Name: "kept"})
		require.NoError(t, err)
		require.NotNil(t, art.SHA256B64)
		arts[art.ID] = *art.SHA256B64
	}
	size := ptyshell.Size{Cols: 80, Rows: 24}
	info, err := k.api.CreateShell(t.Context(), onB.ID, size, "")
	require.NoError(t, err)
	sess, err := k.api.AttachShell(t.Context(), info.ShellID, info.Secret, size)
	require.NoError(t, err)
	defer func() { _ = sess.Close() }()
	waitOutput(t, sess, "#")

	node("cut")
	t.Cleanup(func() {
		if t.Failed() {
			node("restore") // the next tests need the node
		}
	})
	select {
	case <-sess.Done(): // its stream ran through B's kubelet
	case <-time.After(2 * time.Minute):
		t.Fatal("the shell's connection outlived its node by two minutes")
	}
	k.awaitNodeNotReady(t, "cairn-node-b")

	// A request for B's workspace is refused at once, naming the node; so
	// is a reattach to its shell, which may come back with the node until
	// kubernetes.nodeLostSecs (20 s here) is up.
	_, err = k.api.Exec(t.Context(), onB.ID, []string{"true"}, nil, nil, nil)
	require.Equal(t, cairn.ReasonVolumeNodeUnavailable, cairn.ErrorReason(err), "%v", err)
	require.Contains(t, err.Error(), "cairn-node-b")
	_, err = k.api.AttachShell(t.Context(), info.ShellID, info.Secret, size)
	require.Equal(t, cairn.ReasonVolumeNodeUnavailable, cairn.ErrorReason(err), "%v", err)
	require.ErrorContains(t, err, "the shell runs on node cairn-node-b, which is not ready")
	// The shell is ended by the reaper, as node_lost, and a client that
	// reattaches is told so.
	k.awaitShellClosed(t, onB.ID, ptyshell.ReasonNodeLost)
	_, err = k.api.AttachShell(t.Context(), info.ShellID, info.Secret, size)
	require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err), "%v", err)
	require.ErrorContains(t, err, "node_lost, exit code -1): the node it ran on was lost")
	// The maintainer reports B's workspace, and only it.
	_, err = k.api.Sweep(t.Context(), "")
	require.NoError(t, err)
	got, err := k.api.InspectWorkspace(t.Context(), onB.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Workspace.VolumeIssue, "GET reports the workspace whose node is gone")
	require.Equal(t, cairn.ReasonVolumeNodeUnavailable, got.Workspace.VolumeIssue.Reason)
	k.events.await(t, "B's workspace reported", func(e cairn.Event) bool {
		return e.Type == cairn.EventWorkspaceUpserted && e.Workspace.ID == onB.ID && e.Workspace.VolumeIssue != nil
	})
	got, err = k.api.InspectWorkspace(t.Context(), onA.ID)
	require.NoError(t, err)
	require.Nil(t, got.Workspace.VolumeIssue)
	// A's workspace works; every artifact is whole (the store is the record).
	require.Equal(t, "kept on "+onA.Name+"\n", k.cli.ok(t, "exec", onA.Name, "--", "cat", "/mnt/cairn/ws/kept.txt").stdout)
	k.requireArtifacts(t, arts)

	node("restore")
	require.Equal(t, "kept on "+onB.Name+"\n", k.cli.ok(t, "exec", onB.Name, "--", "cat", "/mnt/cairn/ws/kept.txt").stdout,
		"B's workspace works again, its data kept")
	_, err = k.api.Sweep(t.Context(), "")
	require.NoError(t, err)
	got, err = k.api.InspectWorkspace(t.Context(), onB.ID)
	require.NoError(t, err)
	require.Nil(t, got.Workspace.VolumeIssue, "the report clears once the node is back")
	k.requireArtifacts(t, arts)
	k.requireNoPods(t)
	k.requireNoContainersOnNodeB(t)
}

// nodeScript returns a runner of scripts/k8s-node.sh on the suite's cluster.
func (k *kubeStack) nodeScript(t *testing.T) func(what string) {
	root, err := stack.ModuleRoot()
	require.NoError(t, err)
	return func(what string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(root, "scripts", "k8s-node.sh"), what)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "k8s-node.sh %s: %s", what, out)
	}
}

// workspaceOnEachNode sets up a workspace whose volume is on node A
// (cairn-node) and one whose volume is on node B (cairn-node-b).
func (k *kubeStack) workspaceOnEachNode(t *testing.T) (onA, onB *cairn.Workspace) {
	t.Helper()
	return k.workspaceOn(t, "lost-a", "cairn-node"), k.workspaceOn(t, "lost-b", "cairn-node-b")
}

func (k *kubeStack) awaitNodeNotReady(t *testing.T, name string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		node, err := k.kube.CoreV1().Nodes().Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
				return
			}
		}
		require.True(t, time.Now().Before(deadline), "node %s still Ready three minutes after its power was cut", name)
		time.Sleep(time.Second) // polls the API: the node's status is the control plane's verdict
	}
}

// awaitShellClosed waits for the SHELL_CLOSED row of the workspace's shell
// and checks its reason.
func (k *kubeStack) awaitShellClosed(t *testing.T, wsID string, reason ptyshell.Reason) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		rows, err := k.api.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: wsID,
			Types: []cairn.AuditType{cairn.AuditShellClosed}})
		require.NoError(t, err)
		if len(rows) > 0 {
			require.Equal(t, string(reason), rows[0].Metadata["reason"], "%v", rows[0].Metadata)
			return
		}
		require.True(t, time.Now().Before(deadline), "the shell on the lost node was not ended")
		time.Sleep(time.Second) // the reaper's pass, every second here
	}
}

// requireArtifacts downloads each artifact and checks its digest.
func (k *kubeStack) requireArtifacts(t *testing.T, arts map[string]string) {
	t.Helper()
	for id, sum := range arts {
		body := k.download(t, id)
		got := sha256.Sum256([]byte(body))
		require.Equal(t, sum, base64.StdEncoding.EncodeToString(got[:]), "artifact %s", id)
	}
}

// requireNoContainersOnNodeB waits for node B's containerd to hold no
// container of the test's namespace: the pods cairn deleted while the node
// was gone are cleaned up by its kubelet once it is back.
func (k *kubeStack) requireNoContainersOnNodeB(t *testing.T) {
	t.Helper()
	sock := filepath.Join(os.Getenv("CAIRN_K8S_STATE"), "cairn-node-b", "containerd", "containerd.sock")
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err := exec.Command("ctr", "-n", "k8s.io", "--address", sock, "containers", "ls",
			"labels.\"io.kubernetes.pod.namespace\"=="+k.ns).CombinedOutput()
		require.NoError(t, err, "%s", out)
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) <= 1 { // the header only
			return
		}
		require.True(t, time.Now().Before(deadline), "containers of %s left on node B: %s", k.ns, out)
		time.Sleep(time.Second) // the kubelet's housekeeping; nothing to wait on
	}
}
