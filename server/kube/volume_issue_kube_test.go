//go:build kube

package kube

import (
	"cmp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestKubeVolumeIssue asks, as the maintainer does each pass, whether a
// ReadWriteOnce workspace volume can take pods: not while the node of the
// pod that mounts it is cordoned or outside kubernetes.nodeSelector, nor
// when its volume's node is gone; again once the node is uncordoned. With
// ReadWriteMany, before any node holds the volume, and without the grant
// to read nodes there is nothing to report. It cordons the cluster's node
// for a moment, so it runs alone.
func TestKubeVolumeIssue(t *testing.T) {
	kubeconfig := stacktest.Kubeconfig(t)
	cs := stacktest.KubeClient(t, kubeconfig)
	ns := stacktest.KubeNamespace(t, cs)
	ctx := t.Context()
	runtime := func(t *testing.T, cfg Config) *Runtime {
		t.Helper()
		cfg.Namespace, cfg.AppName = ns, ns
		cfg.Kubeconfig = cmp.Or(cfg.Kubeconfig, kubeconfig)
		r, err := New(cfg)
		require.NoError(t, err)
		return r
	}
	r := runtime(t, Config{})
	claim := newClaim(t, r.cluster, "ws", "")
	requireNoIssue := func(t *testing.T, r *Runtime, why string) {
		t.Helper()
		issue, err := r.VolumeIssue(ctx, claim)
		require.NoError(t, err)
		require.Nil(t, issue, why)
	}

	requireNoIssue(t, r, "no node holds the volume yet")
	node := runHolder(t, r.cluster, claim).Spec.NodeName
	requireNoIssue(t, r, "the holder's node takes pods")

	t.Run("OutsideTheNodeSelector", func(t *testing.T) {
		picky := runtime(t, Config{NodeSelector: map[string]string{"cairn.test/no-such-label": "x"}})
		requireIssue(t, picky, claim, node, "is outside kubernetes.nodeSelector")
	})

	t.Run("AGoneNode", func(t *testing.T) {
		gone := newClaim(t, r.cluster, "gone", localVolume(t, cs, "no-such-node"))
		requireIssue(t, r, gone, "no-such-node", "is no longer in the cluster")
	})

	sa := runtime(t, Config{Kubeconfig: stacktest.KubeServiceAccount(t, cs, kubeconfig, ns)})
	require.Eventually(t, func() bool {
		issue, err := sa.VolumeIssue(ctx, claim)
		return err == nil && issue == nil
	}, 30*time.Second, 50*time.Millisecond, "the API authorizes a new RoleBinding a moment after it is made")
	rwx := runtime(t, Config{AccessMode: corev1.ReadWriteMany})
	t.Run("CordonedThenUncordoned", func(t *testing.T) {
		stacktest.Cordon(t, cs, node, true)
		defer stacktest.Cordon(t, cs, node, false)
		requireIssue(t, r, claim, node, "is cordoned")
		requireNoIssue(t, rwx, "with ReadWriteMany pods go anywhere")
		requireNoIssue(t, sa, "without the grant to read nodes the server cannot tell")
		stacktest.Cordon(t, cs, node, false)
		requireNoIssue(t, r, "uncordoned, the node takes pods again")
	})
}

// requireIssue requires r to report claim's volume unusable because node
// is in the state why.
func requireIssue(t *testing.T, r *Runtime, claim, node, why string) {
	t.Helper()
	issue, err := r.VolumeIssue(t.Context(), claim)
	require.NoError(t, err)
	require.NotNil(t, issue)
	require.Equal(t, cairn.ReasonVolumeNodeUnavailable, issue.Reason)
	require.Contains(t, issue.Detail, "node "+node+", which "+why)
}
