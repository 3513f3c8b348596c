//go:build kube

package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// TestKubePlacement places pods of a ReadWriteOnce workspace on the test
// cluster's nodes: pinned to the node of a pod that mounts the claim, or to
// the node its volume's affinity names; refused at once while that node is
// cordoned or when it is gone; left to the scheduler with ReadWriteMany.
// It cordons a node of the cluster for a moment, so it runs alone.
func TestKubePlacement(t *testing.T) {
	kubeconfig := stacktest.Kubeconfig(t)
	cs := stacktest.KubeClient(t, kubeconfig)
	ns := stacktest.KubeNamespace(t, cs)
	ctx := t.Context()
	c, err := connect(Config{Kubeconfig: kubeconfig, Namespace: ns, AppName: ns})
	require.NoError(t, err)
	claim := newClaim(t, c, "ws", "")
	pod := func() *corev1.Pod {
		p := c.podBase(testMeta(c, "p-"+time.Now().Format("150405.000000")), claim, 0)
		p.Spec.Containers = []corev1.Container{{Name: "c", Image: stacktest.Shell(t), ImagePullPolicy: corev1.PullNever,
			Command: []string{"true"}, VolumeMounts: []corev1.VolumeMount{workspaceMount(true)}}}
		return p
	}

	t.Run("NoPodYetIsLeftToTheScheduler", func(t *testing.T) {
		p := pod()
		require.NoError(t, c.place(ctx, p))
		require.Nil(t, p.Spec.Affinity, "the claim is not bound: the local class binds on first use")
	})

	holder := runHolder(t, c, claim)
	node := holder.Spec.NodeName // the node the test cordons, and its volumes name
	t.Run("PinnedToTheNodeOfAPodThatMountsIt", func(t *testing.T) {
		p := pod()
		require.NoError(t, c.place(ctx, p))
		require.Equal(t, []string{holder.Spec.NodeName}, pinnedTo(t, p))
	})

	// A server with the Role alone may not read nodes or volumes: it still
	// pins to the node of a mounting pod, and leaves a volume's affinity
	// to the scheduler.
	sa, err := connect(Config{Kubeconfig: stacktest.KubeServiceAccount(t, cs, kubeconfig, ns), Namespace: ns, AppName: ns})
	require.NoError(t, err)
	t.Run("WithTheRoleAlonePinnedToAMountingPodsNode", func(t *testing.T) {
		p := pod()
		require.Eventually(t, func() bool { return sa.place(ctx, p) == nil }, 30*time.Second, 50*time.Millisecond,
			"the API authorizes a new RoleBinding a moment after it is made")
		require.Equal(t, []string{holder.Spec.NodeName}, pinnedTo(t, p))
	})

	t.Run("ACordonedNodeIsRefusedAtOnce", func(t *testing.T) {
		stacktest.Cordon(t, cs, node, true)
		defer stacktest.Cordon(t, cs, node, false)
		before := podCount(t, c)
		_, err := c.createPod(ctx, pod(), "a test pod")
		requireNodeUnavailable(t, err, node, "is cordoned")
		require.Equal(t, before, podCount(t, c), "no pod was made")
		stacktest.Cordon(t, cs, node, false)
		made, err := c.createPod(ctx, pod(), "a test pod")
		require.NoError(t, err, "uncordoned, the node takes pods again")
		c.deletePod(ctx, made.Name, 0)
	})

	t.Run("PinnedToTheNodeItsVolumeNames", func(t *testing.T) {
		p := c.podBase(testMeta(c, "local"), newClaim(t, c, "local", localVolume(t, cs, node)), 0)
		require.NoError(t, c.place(ctx, p))
		require.Equal(t, []string{node}, pinnedTo(t, p))
	})

	t.Run("WithTheRoleAloneAVolumesAffinityIsTheSchedulers", func(t *testing.T) {
		p := c.podBase(testMeta(c, "local-sa"), newClaim(t, c, "local-sa", localVolume(t, cs, node)), 0)
		require.NoError(t, sa.place(ctx, p))
		require.Nil(t, p.Spec.Affinity)
	})

	t.Run("AVolumeOfAGoneNodeIsRefused", func(t *testing.T) {
		p := c.podBase(testMeta(c, "gone"), newClaim(t, c, "gone", localVolume(t, cs, "no-such-node")), 0)
		requireNodeUnavailable(t, c.place(ctx, p), "no-such-node", "is no longer in the cluster")
	})

	t.Run("ReadWriteManyGoesAnywhere", func(t *testing.T) {
		rwx, err := connect(Config{Kubeconfig: kubeconfig, Namespace: ns, AppName: ns, AccessMode: corev1.ReadWriteMany})
		require.NoError(t, err)
		p := pod()
		require.NoError(t, rwx.place(ctx, p))
		require.Nil(t, p.Spec.Affinity)
	})
}

// newClaim creates a claim of the default class, or bound to the volume
// pv when one is named.
func newClaim(t *testing.T, c *cluster, name, pv string) string {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: c.meta(name, map[string]string{}, map[string]string{}), Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}},
	}}
	if pv != "" {
		none := ""
		pvc.Spec.VolumeName, pvc.Spec.StorageClassName = pv, &none
	}
	_, err := c.api.claims(c.cfg.Namespace).Create(t.Context(), pvc, metav1.CreateOptions{})
	require.NoError(t, err)
	return name
}

// localVolume makes a volume as a local disk's provisioner would: one
// that only node can attach. It is deleted when the test ends.
func localVolume(t *testing.T, cs *kubernetes.Clientset, node string) string {
	t.Helper()
	name := stacktest.AppName(t) + "-" + node
	pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.PersistentVolumeSpec{
		Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")},
		AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
		PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: t.TempDir()}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}},
	}}
	_, err := cs.CoreV1().PersistentVolumes().Create(t.Context(), pv, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		require.NoError(t, cs.CoreV1().PersistentVolumes().Delete(context.Background(), name, metav1.DeleteOptions{}))
	})
	return name
}

// runHolder runs a pod that mounts claim until the test ends.
func runHolder(t *testing.T, c *cluster, claim string) *corev1.Pod {
	t.Helper()
	p := c.podBase(testMeta(c, "holder"), claim, 0)
	p.Spec.Containers = []corev1.Container{{Name: "hold", Image: stacktest.Shell(t), ImagePullPolicy: corev1.PullNever,
		Command: []string{"sleep", "3600"}, VolumeMounts: []corev1.VolumeMount{workspaceMount(true)}}}
	made, err := c.api.pods(c.cfg.Namespace).Create(t.Context(), p, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { c.deletePod(context.Background(), made.Name, 0) })
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	running, err := c.waitPod(ctx, made.Name, started)
	require.NoError(t, err)
	require.NotEmpty(t, running.Spec.NodeName)
	return running
}

func pinnedTo(t *testing.T, p *corev1.Pod) []string {
	t.Helper()
	require.NotNil(t, p.Spec.Affinity)
	terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	require.Len(t, terms, 1)
	require.Len(t, terms[0].MatchFields, 1)
	require.Equal(t, "metadata.name", terms[0].MatchFields[0].Key)
	return terms[0].MatchFields[0].Values
}

func requireNodeUnavailable(t *testing.T, err error, node, why string) {
	t.Helper()
	require.Equal(t, cairn.ReasonVolumeNodeUnavailable, cairn.ErrorReason(err), "%v", err)
	require.Contains(t, err.Error(), "node "+node+", which "+why)
}

func podCount(t *testing.T, c *cluster) int {
	t.Helper()
	list, err := c.api.pods(c.cfg.Namespace).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	return len(list.Items)
}

// TestKubeStartTimeout runs a sidecar whose pod no node can take: it is
// refused with container_start_timeout naming the pod once the pod start
// timeout has passed, and the pod is gone.
func TestKubeStartTimeout(t *testing.T) {
	kubeconfig := stacktest.Kubeconfig(t)
	cs := stacktest.KubeClient(t, kubeconfig)
	ns := stacktest.KubeNamespace(t, cs)
	r, err := New(Config{Kubeconfig: kubeconfig, Namespace: ns, AppName: ns, Image: stacktest.Image(t),
		PodStartTimeout: 2 * time.Second, NodeSelector: map[string]string{"cairn.test/no-such-label": "x"}})
	require.NoError(t, err)
	claim := newClaim(t, r.cluster, "ws", "")

	_, err = r.RunSidecar(t.Context(), service.SidecarSpec{Command: sidecar.CommandPrep, Role: "volume-prep",
		Subject: "ws", WorkspaceID: "ws", VolumeName: claim})
	require.Equal(t, cairn.ReasonContainerStartTimeout, cairn.ErrorReason(err), "%v", err)
	require.Regexp(t, `the 'prep' sidecar pod `+ns+`\.volume-prep\.ws\.[0-9a-z]+ did not start in 2s`, err.Error())
	require.Regexp(t, `the cluster says: 0/\d+ nodes are available`, err.Error(), "the scheduler's own words")
	list, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	for _, p := range list.Items {
		require.NotNil(t, p.DeletionTimestamp, "pod %s is left", p.Name)
	}
}

// testMeta is the metadata of a test's pod of the app.
func testMeta(c *cluster, name string) metav1.ObjectMeta {
	return c.meta(name, map[string]string{LabelRole: "test"}, map[string]string{})
}

// TestKubeStorageClassChecked refuses, at start, a storage class the
// cluster does not have, and one of hostPath volumes on a cluster of
// several nodes (the suite's has two); the local cluster's default class passes, and a server
// without the grant to read classes is not refused.
func TestKubeStorageClassChecked(t *testing.T) {
	kubeconfig := stacktest.Kubeconfig(t)
	cs := stacktest.KubeClient(t, kubeconfig)
	ns := stacktest.KubeNamespace(t, cs)
	check := func(kubeconfig, class string) error {
		r, err := New(Config{Kubeconfig: kubeconfig, Namespace: ns, AppName: ns, StorageClass: class})
		require.NoError(t, err)
		return r.CheckStorage(t.Context())
	}
	require.NoError(t, check(kubeconfig, ""), "the cluster's default class")
	require.NoError(t, check(kubeconfig, "cairn-local"))
	err := check(kubeconfig, "no-such-class")
	require.ErrorContains(t, err, `kubernetes.storageClass: the cluster has no storage class "no-such-class"`)
	require.NoError(t, check(stacktest.KubeServiceAccount(t, cs, kubeconfig, ns), "no-such-class"),
		"without the grant nothing is checked")

	hostPath := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: ns + "-hostpath"}, Provisioner: hostPathProvisioner}
	_, err = cs.StorageV1().StorageClasses().Create(t.Context(), hostPath, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.StorageV1().StorageClasses().Delete(context.Background(), hostPath.Name, metav1.DeleteOptions{})
	})
	nodes, err := cs.CoreV1().Nodes().List(t.Context(), metav1.ListOptions{})
	require.NoError(t, err)
	if len(nodes.Items) == 1 {
		require.NoError(t, check(kubeconfig, hostPath.Name), "one node: its hostPath volumes are beside every pod")
		return
	}
	err = check(kubeconfig, hostPath.Name)
	require.ErrorContains(t, err, fmt.Sprintf("makes hostPath volumes, which name no node; on this cluster of %d nodes", len(nodes.Items)))
}
