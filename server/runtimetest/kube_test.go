//go:build kube

package runtimetest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/kube"
	"github.com/cairn-dev/cairn/server/runtimetest"
)

// The suite's cluster: CAIRN_K8S_STATE names one (a `make k8s-up`
// cluster, say), else the suite brings up its own with ports, bridge and
// pod network apart from the default ones, and takes it down at the end.
// Either way the images are imported from Docker first.
var suiteCluster struct {
	once       sync.Once
	err        error
	env        []string
	kubeconfig string
	broughtUp  bool
}

const (
	kubeSidecarImage = stacktest.SidecarImage
	kubeShellImage   = stacktest.ShellImage
)

func scriptsDir() string { return filepath.Join("..", "..", "scripts") }

func clusterEnv() []string {
	if os.Getenv("CAIRN_K8S_STATE") != "" {
		return os.Environ()
	}
	return append(os.Environ(),
		"CAIRN_K8S_STATE=/tmp/cairn-k8s-runtimetest",
		"CAIRN_K8S_BRIDGE=cairnk8sr0", "CAIRN_K8S_POD_CIDR=10.244.79.0/24",
		"CAIRN_K8S_APISERVER_PORT=28443", "CAIRN_K8S_ETCD_PORT=28379",
		"CAIRN_K8S_KUBELET_PORT=28250", "CAIRN_K8S_KUBELET_HEALTHZ_PORT=28248",
		"CAIRN_K8S_CM_PORT=28257", "CAIRN_K8S_SCHEDULER_PORT=28259",
		"CAIRN_K8S_IMAGES=", "CAIRN_K8S_NODES=2")
}

func runScript(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(scriptsDir(), name), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// cluster brings the suite's cluster up once and imports the images.
func cluster(t *testing.T) (kubeconfig string) {
	t.Helper()
	if os.Geteuid() != 0 {
		stacktest.Need(t, "root", errors.New("the local cluster needs root"))
	}
	stacktest.Image(t)
	stacktest.Shell(t)
	c := &suiteCluster
	c.once.Do(func() {
		c.env = clusterEnv()
		out, err := runScript(c.env, "k8s-up.sh")
		if err != nil {
			c.err = &scriptError{"k8s-up.sh", out, err}
			return
		}
		// The suite's own cluster goes at the end even when a crashed run
		// left it up; one the caller named stays as it was found.
		c.broughtUp = os.Getenv("CAIRN_K8S_STATE") == "" || !strings.Contains(out, "already up")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		c.kubeconfig = lines[len(lines)-1]
		if out, err := runScript(c.env, "k8s/images.sh", kubeSidecarImage, kubeShellImage); err != nil {
			c.err = &scriptError{"k8s/images.sh", out, err}
		}
	})
	require.NoError(t, c.err)
	return c.kubeconfig
}

type scriptError struct {
	name, out string
	err       error
}

func (e *scriptError) Error() string { return e.name + ": " + e.err.Error() + "\n" + e.out }

func clusterDown() {
	c := &suiteCluster
	if !c.broughtUp {
		return
	}
	if out, err := runScript(c.env, "k8s-down.sh"); err != nil {
		fmt.Fprintf(os.Stderr, "k8s-down.sh: %v\n%s", err, out)
	}
}

// TestKube runs the conformance suite on the local cluster, each test in
// a namespace of its own.
func TestKube(t *testing.T) {
	t.Parallel()
	runtimetest.Run(t, runtimetest.Harness{New: newKube, Host: stacktest.KubeHostAddr(t, cluster(t))})
}

func newKube(t *testing.T, timeout time.Duration) *runtimetest.Subject {
	k := startKube(t, cluster(t), timeout)
	w := &workloads{t: t, cs: k.cs, ns: k.ns, app: k.app}
	return &runtimetest.Subject{
		AppName: k.app, Runtime: k.rt, Shells: k.shells, Execs: k.shells, Containers: k.rt, Volumes: k.rt,
		Mount: w.mount, Leak: w.leak, Logs: w.logs,
	}
}

// kubeApp is one fresh app on the cluster: its namespace (deleted at the
// test's end), the service account's kubeconfig and the runtimes on it.
type kubeApp struct {
	app, ns    string
	kubeconfig string // the service account's
	cs         kubernetes.Interface
	rt         *kube.Runtime
	shells     *kube.Shells
}

// startKube makes a fresh app on the cluster adminKubeconfig names.
func startKube(t testing.TB, adminKubeconfig string, timeout time.Duration) *kubeApp {
	t.Helper()
	app := "cairnt" + strings.ToLower(ulid.Make().String()[16:])
	cs := clientset(t, adminKubeconfig)
	ns := namespace(t, cs, app)
	sa := stacktest.KubeServiceAccount(t, cs, adminKubeconfig, ns)
	rt, err := kube.New(kube.Config{
		AppName: app, Kubeconfig: sa, Namespace: ns, StorageClass: "cairn-local",
		Image: kubeSidecarImage, Timeout: timeout, TransferHostNetwork: true, PodStartTimeout: 2 * time.Minute,
	})
	require.NoError(t, err)
	// The API authorizes a new RoleBinding a moment after it is made.
	require.Eventually(t, func() bool { return rt.Ping(t.Context()) == nil }, 30*time.Second, 50*time.Millisecond,
		"the service account may use its namespace")
	shells, err := rt.Shells(kube.ShellConfig{Image: kubeShellImage})
	require.NoError(t, err)
	return &kubeApp{app: app, ns: ns, kubeconfig: sa, cs: cs, rt: rt, shells: shells}
}

func clientset(t testing.TB, kubeconfig string) kubernetes.Interface {
	t.Helper()
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: kubeconfig})
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(rc)
	require.NoError(t, err)
	return cs
}

// namespace makes a namespace for one test; deleting it at the end
// deletes whatever the test left in it.
func namespace(t testing.TB, cs kubernetes.Interface, name string) string {
	t.Helper()
	_, err := cs.CoreV1().Namespaces().Create(t.Context(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Pods are refused until the controller-manager made the namespace's
	// default service account.
	require.Eventually(t, func() bool {
		_, err := cs.CoreV1().ServiceAccounts(name).Get(t.Context(), "default", metav1.GetOptions{})
		return err == nil
	}, time.Minute, 50*time.Millisecond, "namespace %s has its default service account", name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Logf("delete namespace %s: %v", name, err)
		}
	})
	return name
}

// workloads makes the pods cairn itself never makes: a user's pod mounting
// a workspace, a sidecar a crashed server left.
type workloads struct {
	t   *testing.T
	cs  kubernetes.Interface
	ns  string
	app string
}

func (w *workloads) pod(t *testing.T, name, volume string, labels map[string]string) {
	t.Helper()
	grace := int64(0)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{
			Hostname:      "work",
			RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{
				Name: "work", Image: kubeShellImage, ImagePullPolicy: corev1.PullNever,
				Command:      []string{"/bin/sh", "-c", "sleep 600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "ws", MountPath: cairn.MountPath}},
			}},
			Volumes: []corev1.Volume{{Name: "ws", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: strings.ToLower(volume)}}}},
		},
	}
	_, err := w.cs.CoreV1().Pods(w.ns).Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err := w.cs.CoreV1().Pods(w.ns).Get(t.Context(), name, metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning
	}, 2*time.Minute, 100*time.Millisecond, "pod %s runs", name)
}

func (w *workloads) mount(t *testing.T, volume string) func() {
	t.Helper()
	name := "user-" + strings.ToLower(ulid.Make().String())
	w.pod(t, name, volume, map[string]string{"app": "user"})
	return func() {
		grace := int64(0)
		require.NoError(t, w.cs.CoreV1().Pods(w.ns).Delete(t.Context(), name, metav1.DeleteOptions{GracePeriodSeconds: &grace}))
		require.Eventually(t, func() bool {
			_, err := w.cs.CoreV1().Pods(w.ns).Get(t.Context(), name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		}, time.Minute, 100*time.Millisecond, "pod %s goes", name)
	}
}

// logs reads a shell pod's container log through the API, as anyone who
// may read pods' logs can.
func (w *workloads) logs(t *testing.T, pod string) []byte {
	t.Helper()
	b, err := w.cs.CoreV1().Pods(w.ns).GetLogs(pod, &corev1.PodLogOptions{Container: kube.KindShell}).DoRaw(t.Context())
	require.NoError(t, err)
	return b
}

func (w *workloads) leak(t *testing.T, volume, workspaceID string) string {
	t.Helper()
	name := w.app + ".leaked." + strings.ToLower(ulid.Make().String())
	w.pod(t, name, volume, map[string]string{kube.LabelApp: w.app, kube.LabelRole: "sidecar",
		kube.LabelSidecar: "true", kube.LabelWorkspace: workspaceID})
	return name
}

// TestKubeSetupWaitsOutALeavingClaim: a claim deleted behind cairn's back
// lingers while a finalizer holds it (the claim protection does, for a
// moment). A setup must not take the dying claim for the volume — a pod
// that mounts it is never scheduled — but wait until it is gone and make
// it anew. The test holds the old claim until CreateVolume returns or 2 s
// passed: a create that took the dying claim returns at once, and the
// volume is then gone.
func TestKubeSetupWaitsOutALeavingClaim(t *testing.T) {
	t.Parallel()
	k := startKube(t, cluster(t), time.Minute)
	ctx := t.Context()
	volume := k.app + "-" + ulid.Make().String()
	require.NoError(t, k.rt.CreateVolume(ctx, volume, nil, 0))
	t.Cleanup(func() { _ = k.rt.RemoveVolume(context.Background(), volume) })
	claims := k.cs.CoreV1().PersistentVolumeClaims(k.ns)
	claim := strings.ToLower(volume)
	const hold = "cairn.test/hold"
	var old *corev1.PersistentVolumeClaim
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error { // the binder writes it too
		pvc, err := claims.Get(ctx, claim, metav1.GetOptions{})
		if err != nil {
			return err
		}
		pvc.Finalizers = append(pvc.Finalizers, hold)
		old, err = claims.Update(ctx, pvc, metav1.UpdateOptions{})
		return err
	}))
	require.NoError(t, claims.Delete(ctx, claim, metav1.DeleteOptions{}))

	created := make(chan error, 1)
	go func() { created <- k.rt.CreateVolume(ctx, volume, nil, 0) }()
	var result error
	returned := false
	select {
	case result = <-created:
		returned = true
	case <-time.After(2 * time.Second):
	}
	release := func() error {
		pvc, err := claims.Get(ctx, claim, metav1.GetOptions{})
		if err != nil || pvc.UID != old.UID {
			return err
		}
		pvc.Finalizers = slices.DeleteFunc(pvc.Finalizers, func(f string) bool { return f == hold })
		_, err = claims.Update(ctx, pvc, metav1.UpdateOptions{})
		return err
	}
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, release))
	if !returned {
		result = <-created
	}
	require.NoError(t, result)
	now, err := claims.Get(ctx, claim, metav1.GetOptions{})
	require.NoError(t, err, "the volume's claim exists after the setup")
	require.NotEqual(t, old.UID, now.UID, "a new claim, not the one that was being deleted")
	require.Nil(t, now.DeletionTimestamp)
	exists, err := k.rt.VolumeExists(ctx, volume)
	require.NoError(t, err)
	require.True(t, exists)
}
