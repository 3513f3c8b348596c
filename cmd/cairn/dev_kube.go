package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server"
)

// devRuntime applies --runtime: on kubernetes the stack's volumes,
// sidecars and shells are claims and pods of the cluster, its transfer
// sidecars on the node's network so that they reach the dev store on
// loopback (the local cluster's node is this machine). A -c file may set
// any kubernetes key; the flags fill only what it left unset.
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
// expected to have them already (README: Running on Kubernetes).
func loadClusterImages(ctx context.Context, cfg server.Config, images ...string) error {
	kubeconfig := cfg.Kubernetes.Kubeconfig
	if cfg.Workspace.VolumeType != "kubernetes" || kubeconfig == "" {
		return nil
	}
	state := filepath.Dir(kubeconfig)
	if _, err := os.Stat(filepath.Join(state, "containerd", "containerd.sock")); err != nil {
		return nil // not a local cluster of this machine
	}
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
