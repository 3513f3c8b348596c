//go:build kube

package main

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestKubernetesDevStack runs `cairn dev --runtime kubernetes` on the
// local cluster (its kubeconfig found through CAIRN_K8S_STATE, as after
// `make k8s-up`): a volume is a claim, a file a tool wrote in it is kept as
// an artifact by a transfer pod that reaches the dev store, and nothing of
// the stack's is left in the namespace when it stops.
func TestKubernetesDevStack(t *testing.T) {
	cs := stacktest.KubeClient(t, stacktest.Kubeconfig(t))
	ns := stacktest.KubeNamespace(t, cs)
	d := startDevWith(t, []string{"--runtime", "kubernetes"}, fmt.Sprintf("kubernetes: {namespace: %s}", ns))
	require.Contains(t, d.output.String(), "  runtime    kubernetes, namespace "+ns+" (")

	c := &cliServer{url: d.url, token: d.token, bin: d.bin}
	var ws cairn.Workspace
	require.NoError(t, json.Unmarshal(c.json(t, "ws", "create", "dev")["workspace"], &ws))
	c.ok(t, "ws", "setup", "dev")
	claims, err := cs.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "cairn.app=" + d.app})
	require.NoError(t, err)
	require.Len(t, claims.Items, 1, "the volume is a claim of the stack's app")

	c.ok(t, "exec", "dev", "--", "sh", "-c", "echo kept > /mnt/cairn/ws/kept.txt")
	c.ok(t, "art", "save", "dev", "/mnt/cairn/ws/kept.txt", "--name", "kept")
	require.Equal(t, "kept\n", c.ok(t, "art", "download", "dev/kept", "-").stdout)
	c.ok(t, "ws", "teardown", "dev")
	claims, err = cs.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, claims.Items, "teardown deleted the claim")

	// A workspace still set up when the stack stops keeps its claim; purge
	// removes it, and the state dir, as it removes Docker volumes.
	c.ok(t, "ws", "create", "left")
	c.ok(t, "ws", "setup", "left")
	d.stop(t)
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, pods.Items, "no pod of the stack outlives it")
	claims, err = cs.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, claims.Items, 1, "a set-up workspace's claim outlives the stack")
	out := d.purge(t)
	require.Contains(t, out, "removed the volume claim of ")
	claims, err = cs.CoreV1().PersistentVolumeClaims(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	require.Empty(t, claims.Items, "purge deleted the claim")
	require.NoDirExists(t, d.stateDir)
}
