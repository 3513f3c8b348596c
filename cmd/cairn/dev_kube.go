package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/server/kube"
)

// devRuntime applies --runtime: on kubernetes the stack's volumes,
// sidecars and shells are claims and pods of the cluster, its transfer
// sidecars on the node's network so that they reach the dev store (see
// devStoreHost). A -c file may set any kubernetes key; the flags fill only
// what it left unset.
func devRuntime(cfg *server.Config, o devOptions) error {
	switch o.runtime {
	case "docker":
		if o.kubeconfig != "" {
			return &usageError{fmt.Errorf("--kubeconfig needs --runtime kubernetes")}
		}
		return nil
	case "kubernetes":
	default:
		return &usageError{fmt.Errorf("--runtime %q: want docker or kubernetes", o.runtime)}
	}
	cfg.Workspace.VolumeType = "kubernetes"
	k := &cfg.Kubernetes
	if k.Kubeconfig == "" && !k.InCluster {
		k.Kubeconfig = cmp.Or(o.kubeconfig, localKubeconfig())
	}
	k.TransferHostNetwork = true
	return cfg.Validate()
}

// devStoreHost is the address the dev store listens on: loopback, where
// Docker's transfer sidecars (host networking) reach it; on a local cluster
// of this machine, the address its API server listens on, which every
// node routes to (a second node's loopback is its own).
func devStoreHost(o devOptions) string {
	kubeconfig := cmp.Or(o.kubeconfig, localKubeconfig())
	if o.runtime != "kubernetes" || !isLocalCluster(kubeconfig) {
		return "127.0.0.1"
	}
	rc, err := kube.RESTConfig(kube.Config{Kubeconfig: kubeconfig})
	if err != nil {
		return "127.0.0.1" // the runtime's own check reports the kubeconfig
	}
	u, err := url.Parse(rc.Host)
	if err != nil || !isOwnAddress(u.Hostname()) {
		return "127.0.0.1"
	}
	return u.Hostname()
}

// isLocalCluster reports whether kubeconfig is one `make k8s-up` wrote:
// the cluster's containerd socket lies beside it.
func isLocalCluster(kubeconfig string) bool {
	if kubeconfig == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(kubeconfig), "containerd", "containerd.sock"))
	return err == nil
}

// isOwnAddress reports whether host is an IP address of this machine.
func isOwnAddress(host string) bool {
	ip := net.ParseIP(host)
	addrs, err := net.InterfaceAddrs()
	if ip == nil || err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// localKubeconfig is the kubeconfig of the cluster CAIRN_K8S_STATE names,
// or "" (the standard rules: $KUBECONFIG, ~/.kube/config).
func localKubeconfig() string {
	if state := os.Getenv("CAIRN_K8S_STATE"); state != "" {
		return filepath.Join(state, "admin.kubeconfig")
	}
	return ""
}

// loadClusterImages copies the stack's images from Docker into the local
// cluster (whose pods never pull) when the kubeconfig is one `make k8s-up`
// wrote and the checkout's import script is at hand; any other cluster is
// expected to have them already (docs/operations.md, "A local cluster").
func loadClusterImages(ctx context.Context, cfg server.Config, images ...string) error {
	kubeconfig := cfg.Kubernetes.Kubeconfig
	if cfg.Workspace.VolumeType != "kubernetes" || kubeconfig == "" {
		return nil
	}
	if !isLocalCluster(kubeconfig) {
		return nil
	}
	state := filepath.Dir(kubeconfig)
	root, err := stack.ModuleRoot()
	if err != nil {
		return fmt.Errorf("the local cluster at %s needs the images imported: run scripts/k8s/images.sh %s in a cairn checkout",
			state, strings.Join(images, " "))
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, "scripts", "k8s", "images.sh"), images...)
	cmd.Env = append(os.Environ(), "CAIRN_K8S_STATE="+state)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("import %s into the cluster at %s: %w: %s", strings.Join(images, " "), state, err, out)
	}
	return nil
}

// devKubeFile, in the state dir of a stack on Kubernetes, tells purge
// where the stack's claims and pods are once the stack is gone.
const devKubeFile = "kubernetes.json"

type devKube struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	InCluster  bool   `json:"in_cluster,omitempty"`
	Namespace  string `json:"namespace"`
	App        string `json:"app"`
}

// recordDevKube writes devKubeFile for a stack on Kubernetes.
func recordDevKube(dir string, cfg server.Config) error {
	if cfg.Workspace.VolumeType != "kubernetes" {
		return nil
	}
	k := cfg.Kubernetes
	b, err := json.Marshal(devKube{Kubeconfig: k.Kubeconfig, InCluster: k.InCluster, Namespace: k.Namespace, App: cfg.AppName})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, devKubeFile), b, 0o600)
}

// purgeDevKube deletes, on the cluster a stopped stack ran on, the pods
// its instance made and the claims of its volumes; it returns the volumes
// whose claims a pod of someone else still mounts. A stack that never ran
// on Kubernetes has no devKubeFile and nothing to do here.
func purgeDevKube(ctx context.Context, dir, instance string, volumes []string, printf func(string, ...any)) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, devKubeFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var k devKube
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", devKubeFile, err)
	}
	rt, err := kube.New(kube.Config{AppName: k.App, Kubeconfig: k.Kubeconfig, InCluster: k.InCluster, Namespace: k.Namespace})
	if err != nil {
		return nil, err
	}
	pods, err := rt.RemoveInstancePods(ctx, instance)
	for _, p := range pods {
		printf("removed pod %s/%s\n", k.Namespace, p)
	}
	if err != nil {
		return nil, err
	}
	var inUse []string
	for _, name := range volumes {
		exists, err := rt.VolumeExists(ctx, name)
		if err != nil {
			return nil, err
		}
		if !exists {
			continue
		}
		err = rt.RemoveVolume(ctx, name)
		switch {
		case err == nil:
			printf("removed the volume claim of %s in %s\n", name, k.Namespace)
		case cairn.ErrorReason(err) == cairn.ReasonVolumeInUse:
			inUse = append(inUse, name)
		default:
			return nil, fmt.Errorf("remove the volume claim of %s: %w", name, err)
		}
	}
	return inUse, nil
}
