package stacktest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/cairn-dev/cairn/internal/stack"
)

// The tests' cluster is the one CAIRN_K8S_STATE names: `make test` brings
// one up for the run (scripts/k8s-test.sh), a developer names their `make
// k8s-up` one. Bringing a cluster up is minutes of a cold build and changes
// the host, so no test does it by itself.
var kubeImages struct {
	mu       sync.Mutex
	imported map[string]bool
}

// Kubeconfig returns the admin kubeconfig of the tests' cluster, with the
// sidecar and shell images imported into it. Under CI=true a missing
// cluster fails the test; elsewhere it skips.
func Kubeconfig(t testing.TB) string {
	t.Helper()
	state := os.Getenv("CAIRN_K8S_STATE")
	if state == "" {
		Need(t, "a Kubernetes cluster", errNoCluster)
	}
	kubeconfig := filepath.Join(state, "admin.kubeconfig")
	if _, err := os.Stat(kubeconfig); err != nil {
		Need(t, "a Kubernetes cluster", err)
	}
	ImportImages(t, Image(t), Shell(t))
	return kubeconfig
}

type clusterError string

func (e clusterError) Error() string { return string(e) }

const errNoCluster = clusterError("CAIRN_K8S_STATE names no cluster: run `make k8s-up` and set CAIRN_K8S_STATE=.cairn/k8s")

// ImportImages copies Docker images into the cluster's containerd, each
// once per test binary (pods never pull).
func ImportImages(t testing.TB, images ...string) {
	t.Helper()
	kubeImages.mu.Lock()
	defer kubeImages.mu.Unlock()
	if kubeImages.imported == nil {
		kubeImages.imported = map[string]bool{}
	}
	var missing []string
	for _, img := range images {
		if !kubeImages.imported[img] {
			missing = append(missing, img)
		}
	}
	if len(missing) == 0 {
		return
	}
	root, err := stack.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, filepath.Join(root, "scripts", "k8s", "images.sh"), missing...).CombinedOutput()
	if err != nil {
		t.Fatalf("import %v into the cluster: %v\n%s", missing, err, out)
	}
	for _, img := range missing {
		kubeImages.imported[img] = true
	}
}

// KubeClient is a clientset for kubeconfig.
func KubeClient(t testing.TB, kubeconfig string) *kubernetes.Clientset {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// KubeNamespace makes a namespace named after the test's app name and
// deletes it when the test ends, waiting until it is gone (its pods and
// claims with it), so that a test that leaks is seen by the next check.
func KubeNamespace(t testing.TB, cs *kubernetes.Clientset) string {
	t.Helper()
	name := AppName(t)
	_, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete namespace %s: %v", name, err)
			return
		}
		for ctx.Err() == nil {
			_, err := cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond): // polls the API; nothing to wait on
			}
		}
		t.Errorf("namespace %s still there after 2 minutes", name)
	})
	return name
}

// Kubectl is $KUBECTL, kubectl on PATH, or the one scripts/k8s builds
// into its cache ($CAIRN_K8S_CACHE, else the newest version there).
func Kubectl() (string, error) {
	if k := os.Getenv("KUBECTL"); k != "" {
		return k, nil
	}
	if k, err := exec.LookPath("kubectl"); err == nil {
		return k, nil
	}
	if cache := os.Getenv("CAIRN_K8S_CACHE"); cache != "" {
		return filepath.Join(cache, "bin", "kubectl"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	found, _ := filepath.Glob(filepath.Join(base, "cairn", "k8s", "v*", "bin", "kubectl"))
	if len(found) == 0 {
		return "", clusterError("no kubectl: set KUBECTL, put it on PATH or build the cluster's (scripts/k8s)")
	}
	return found[len(found)-1], nil
}

// KubeServiceAccount grants, in ns, the service account and Role of
// deploy/kubernetes/rbac.yaml and returns a kubeconfig acting as it: a
// test runs with exactly the rights a deployed server has.
func KubeServiceAccount(t testing.TB, cs kubernetes.Interface, adminKubeconfig, ns string) string {
	t.Helper()
	ctx := t.Context()
	root, err := stack.ModuleRoot()
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "kubernetes", "rbac.yaml"))
	require.NoError(t, err)
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		require.NoError(t, err)
		switch o := obj.(type) {
		case *corev1.ServiceAccount:
			o.Namespace = ns
			_, err = cs.CoreV1().ServiceAccounts(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.Role:
			o.Namespace = ns
			_, err = cs.RbacV1().Roles(ns).Create(ctx, o, metav1.CreateOptions{})
		case *rbacv1.RoleBinding:
			o.Namespace = ns
			for i := range o.Subjects {
				o.Subjects[i].Namespace = ns
			}
			_, err = cs.RbacV1().RoleBindings(ns).Create(ctx, o, metav1.CreateOptions{})
		default:
			t.Fatalf("rbac.yaml holds a %T", obj)
		}
		require.NoError(t, err)
	}
	secs := int64(3600)
	tok, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "cairn",
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &secs}}, metav1.CreateOptions{})
	require.NoError(t, err)
	admin, err := clientcmd.LoadFromFile(adminKubeconfig)
	require.NoError(t, err)
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cairn"] = admin.Clusters[admin.Contexts[admin.CurrentContext].Cluster]
	cfg.AuthInfos["cairn"] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["cairn"] = &clientcmdapi.Context{Cluster: "cairn", AuthInfo: "cairn", Namespace: ns}
	cfg.CurrentContext = "cairn"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*cfg, path))
	return path
}

// KubeHostAddr is the address at which the pods of the cluster kubeconfig
// names, on any of its nodes, reach this machine: the local cluster's API
// server listens on its first node's address (its bridge's), which the
// second node routes to as well.
func KubeHostAddr(t testing.TB, kubeconfig string) string {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	require.NoError(t, err)
	u, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	ip := net.ParseIP(u.Hostname())
	require.True(t, ip != nil && !ip.IsLoopback(),
		"the cluster's API server is at %s, not at an address its pods reach this machine at", cfg.Host)
	return ip.String()
}

// KubeStoreEndpoint is the shared store as the cluster's pods reach it,
// on every node: a relay at KubeHostAddr (for ServerOptions.PresignEndpoint).
func KubeStoreEndpoint(t testing.TB, kubeconfig string) string {
	t.Helper()
	host := KubeHostAddr(t, kubeconfig)
	return net.JoinHostPort(host, strconv.Itoa(Relay(t, host, S3(t).Endpoint)))
}

// Cordon marks node unschedulable (on) or schedulable again, as kubectl
// cordon and uncordon do.
func Cordon(t testing.TB, cs kubernetes.Interface, node string, on bool) {
	t.Helper()
	patch := fmt.Appendf(nil, `{"spec":{"unschedulable":%t}}`, on)
	_, err := cs.CoreV1().Nodes().Patch(context.Background(), node, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	require.NoError(t, err)
}
