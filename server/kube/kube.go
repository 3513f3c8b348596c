// Package kube is the Kubernetes adapter of the runtime ports: workspace
// volumes as PersistentVolumeClaims, sidecars as hardened pods run to
// completion, shells and execs as execs into pods held by an idle process
// (no attach: the kubelet logs what a TTY container writes, so every
// echoed keystroke would land in the node's logs). It reaches the API
// through api.go's two REST clients, not client-go's Clientset. API errors
// are translated here; nothing Kubernetes-specific leaves the package.
package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"

	"github.com/cairn-dev/cairn"
)

// Config holds the adapter's settings; zero values take defaults.
type Config struct {
	AppName string // default "cairn"
	// Instance, when set, is recorded on every pod this runtime creates
	// (the cairn.instance annotation), so one server's leftovers are told
	// from another's that shares the namespace and the app name.
	Instance string
	// Kubeconfig is the path of a kubeconfig file; empty with InCluster
	// false means the standard loading rules ($KUBECONFIG, ~/.kube/config).
	Kubeconfig string
	// InCluster uses the pod's service account instead of a kubeconfig.
	InCluster bool
	Namespace string // default "cairn"
	// StorageClass names the claims' class; empty means the cluster's
	// default class.
	StorageClass string
	AccessMode   corev1.PersistentVolumeAccessMode // default ReadWriteOnce
	// VolumeSize is what a claim asks for when its workspace names no
	// size; default 1Gi. MaxVolumeSize is the largest size a workspace may
	// name; default 100Gi.
	VolumeSize    resource.Quantity
	MaxVolumeSize resource.Quantity
	// ImagePullPolicy of every pod; default Never: cairn's images are
	// built locally and loaded into the nodes, never pulled.
	ImagePullPolicy corev1.PullPolicy
	// PodStartTimeout bounds how long a pod may take to be scheduled and
	// start, and a claim to be bound; default 60 s.
	PodStartTimeout time.Duration
	// NodeSelector pins every pod of cairn to matching nodes.
	NodeSelector map[string]string
	// NodeLostGrace is how long a node may be gone or not Ready before the
	// shells on it are ended as node_lost; default 60 s.
	NodeLostGrace time.Duration

	Image   string        // sidecar image; default "cairn-sidecar:latest"
	Timeout time.Duration // per sidecar run; default 300 s
	// TransferHostNetwork runs transfer sidecars on the node's network, as
	// the Docker dev stack runs them on the host's: the way a local
	// cluster without Services reaches a store on loopback.
	TransferHostNetwork bool
	ExtraEnv            map[string]string // transfer sidecars only; never CAIRN_*
	MaxConcurrent       int               // sidecars at once; default 8
	// MaxBrowsers bounds the warm browse pods (default 16), BrowseIdle
	// how long one is kept without a request (default 60 s), BrowseTimeout
	// one browse request (default 30 s), as on Docker.
	MaxBrowsers   int
	BrowseIdle    time.Duration
	BrowseTimeout time.Duration
	Logger        *slog.Logger
	// OnSidecar, when set, sees every sidecar run end, as on Docker.
	OnSidecar func(command, result string, took time.Duration)
}

// withDefaults fills in the zero values.
func (c Config) withDefaults() Config {
	c.AppName = cmp.Or(c.AppName, "cairn")
	c.Namespace = cmp.Or(c.Namespace, "cairn")
	c.AccessMode = cmp.Or(c.AccessMode, corev1.ReadWriteOnce)
	if c.VolumeSize.IsZero() {
		c.VolumeSize = resource.MustParse("1Gi")
	}
	if c.MaxVolumeSize.IsZero() {
		c.MaxVolumeSize = resource.MustParse("100Gi")
	}
	c.ImagePullPolicy = cmp.Or(c.ImagePullPolicy, corev1.PullNever)
	c.PodStartTimeout = cmp.Or(c.PodStartTimeout, 60*time.Second)
	c.NodeLostGrace = cmp.Or(c.NodeLostGrace, 60*time.Second)
	c.Image = cmp.Or(c.Image, "cairn-sidecar:latest")
	c.Timeout = cmp.Or(c.Timeout, 300*time.Second)
	c.MaxConcurrent = cmp.Or(c.MaxConcurrent, 8)
	c.MaxBrowsers = cmp.Or(c.MaxBrowsers, 16)
	c.BrowseIdle = cmp.Or(c.BrowseIdle, 60*time.Second)
	c.BrowseTimeout = cmp.Or(c.BrowseTimeout, 30*time.Second)
	return c
}

// RESTConfig loads the API client configuration cfg names: the pod's
// service account, or a kubeconfig.
func RESTConfig(cfg Config) (*rest.Config, error) {
	if cfg.InCluster {
		rc, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("kubernetes in-cluster config: %w", err)
		}
		return rc, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = cfg.Kubeconfig
	rc, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, nil).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes client config: %w", err)
	}
	return rc, nil
}

// cluster is one API connection and the settings every part of the
// adapter shares.
type cluster struct {
	rc  *rest.Config
	api api
	cfg Config
	log *slog.Logger
	now func() time.Time

	placement placementGrant
}

// connect makes the API client of cfg. It does not call the API.
func connect(cfg Config) (*cluster, error) {
	cfg = cfg.withDefaults()
	rc, err := RESTConfig(cfg)
	if err != nil {
		return nil, err
	}
	log := cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	rc.WarningHandler = apiWarnings{log}
	// client-go logs through klog, which writes its own format to stderr
	// past the server's log level and JSON lines; klog is process-wide, so
	// the last runtime connected names the logger (they share the server's).
	klog.SetSlogLogger(log.With("component", "client-go"))
	a, err := newAPI(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}
	return &cluster{rc: rc, api: a, cfg: cfg, log: log, now: time.Now}, nil
}

// apiWarnings sends the API server's warnings to the log instead of
// client-go's own stderr logger.
type apiWarnings struct{ log *slog.Logger }

func (w apiWarnings) HandleWarningHeader(code int, agent, text string) {
	w.log.Warn("kubernetes API warning", "code", code, "agent", agent, "text", text)
}

// Ping checks that the API answers and lets cairn list claims in its
// namespace (a namespaced Role cannot grant reading the namespace itself).
func (c *cluster) Ping(ctx context.Context) error {
	_, err := c.api.claims(c.cfg.Namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return unavailable("list volume claims in the namespace "+c.cfg.Namespace, err)
	}
	return nil
}

// unavailable reports an API failure without its text, which may name
// cluster internals; the cause is kept for the log. The reason is the
// service's one word for an engine that failed, docker_unavailable.
func unavailable(what string, err error) error {
	if apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) {
		// Every value handed to the API is checked first; one refused
		// anyway is a bug of ours, not an outage.
		return cairn.Internal("the kubernetes API refused the object ("+what+")", err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable,
			Detail: "the kubernetes API did not answer in time (" + what + ")", Err: err}
	}
	return &cairn.Error{Reason: cairn.ReasonDockerUnavailable,
		Detail: "the kubernetes API failed to " + what, Err: fmt.Errorf("%s: %w", what, err)}
}
