package server

import (
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cairn-dev/cairn/server/kube"
)

// KubernetesConfig is `kubernetes`: the runtime when workspace.volumeType
// is kubernetes.
type KubernetesConfig struct {
	// A kubeconfig file; empty, with `kubernetes.inCluster` false, means
	// the usual rules (`$KUBECONFIG`, then `~/.kube/config`).
	Kubeconfig string `yaml:"kubeconfig"`
	// Use the service account of the pod the server runs in; then
	// `kubernetes.kubeconfig` must be empty.
	InCluster bool `yaml:"inCluster"`
	// The namespace of every claim and pod.
	Namespace string `yaml:"namespace"`
	// The storage class of workspace claims; empty means the cluster's
	// default class.
	StorageClass string `yaml:"storageClass"`
	// The access mode of workspace claims.
	AccessMode string `yaml:"accessMode"`
	// The storage a workspace claim asks for when its workspace names no
	// `volume_metadata.size_bytes`, a positive Kubernetes quantity such as
	// `10Gi`.
	VolumeSize string `yaml:"volumeSize"`
	// The largest storage a workspace may ask for in
	// `volume_metadata.size_bytes`, a Kubernetes quantity; a larger size is
	// refused when the workspace is created or its volume metadata set.
	MaxVolumeSize string `yaml:"maxVolumeSize"`
	// Node labels every pod must match (a label key to its value).
	NodeSelector map[string]string `yaml:"nodeSelector"`
	// The image pull policy of every pod; `Never` fits images built
	// locally and loaded into the nodes, as cairn's are.
	ImagePullPolicy string `yaml:"imagePullPolicy"`
	// Seconds a pod may take to start; a pod that does not is refused
	// with container_start_timeout. At most 300, the time a client's shell
	// or exec dial waits for the server's answer.
	PodStartTimeoutSecs int `yaml:"podStartTimeoutSecs"`
	// Seconds a node may be gone or not Ready before the shells and execs
	// whose pods run on it are ended with reason node_lost and their pods
	// deleted. The cluster itself marks a node not Ready some 40–50 s after
	// its kubelet stops reporting; this grace counts from then.
	NodeLostSecs int `yaml:"nodeLostSecs"`
	// Run transfer sidecars on the node's network, so that a cluster
	// without Services (the local one of `make k8s-up`) reaches a store on
	// loopback.
	TransferHostNetwork bool `yaml:"transferHostNetwork"`
}

// DefaultKubernetesConfig is the adapter's defaults, spelled out.
func DefaultKubernetesConfig() KubernetesConfig {
	return KubernetesConfig{Namespace: "cairn", AccessMode: string(corev1.ReadWriteOnce), VolumeSize: "1Gi",
		MaxVolumeSize: "100Gi", ImagePullPolicy: string(corev1.PullNever), PodStartTimeoutSecs: 60,
		NodeLostSecs: 60}
}

// dnsLabel is RFC 1123's label, what a namespace name must be.
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// labelPart is a label key's name part or a label value.
var labelPart = regexp.MustCompile(`^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$`)

// validate checks the section; it matters only when the runtime is
// kubernetes.
func (k KubernetesConfig) validate(p *configProblems) {
	if !dnsLabel.MatchString(k.Namespace) {
		p.add("kubernetes.namespace", "must be a DNS label (lower-case letters, digits, '-', at most 63), got %q", k.Namespace)
	}
	if k.InCluster && k.Kubeconfig != "" {
		p.add("kubernetes.kubeconfig", "cannot be set with kubernetes.inCluster")
	}
	p.allowed("kubernetes.accessMode", k.AccessMode)
	size, err := resource.ParseQuantity(k.VolumeSize)
	if err != nil || size.Sign() <= 0 {
		p.add("kubernetes.volumeSize", "must be a positive quantity such as 10Gi, got %q", k.VolumeSize)
	}
	if most, err := resource.ParseQuantity(k.MaxVolumeSize); err != nil || most.Sign() <= 0 {
		p.add("kubernetes.maxVolumeSize", "must be a positive quantity such as 100Gi, got %q", k.MaxVolumeSize)
	} else if most.Cmp(size) < 0 {
		p.add("kubernetes.maxVolumeSize", "must be at least kubernetes.volumeSize (%s), got %q", k.VolumeSize, k.MaxVolumeSize)
	}
	p.allowed("kubernetes.imagePullPolicy", k.ImagePullPolicy)
	inRange(p, "kubernetes.podStartTimeoutSecs", k.PodStartTimeoutSecs)
	inRange(p, "kubernetes.nodeLostSecs", k.NodeLostSecs)
	for key, value := range k.NodeSelector {
		if key == "" || !labelPart.MatchString(value) {
			p.add("kubernetes.nodeSelector", "%q: %q is not a label selector term", key, value)
		}
	}
}

// kubeConfig is the adapter's configuration for this server.
func (s *Server) kubeConfig() kube.Config {
	k, sc := s.cfg.Kubernetes, s.cfg.Artifact.Sidecar
	env := make(map[string]string, len(sc.Envs))
	for _, e := range sc.Envs {
		env[e.Name] = e.Value
	}
	return kube.Config{
		AppName: s.cfg.AppName, Instance: s.instance,
		Kubeconfig: k.Kubeconfig, InCluster: k.InCluster, Namespace: k.Namespace,
		StorageClass: k.StorageClass, AccessMode: corev1.PersistentVolumeAccessMode(k.AccessMode),
		VolumeSize:      resource.MustParse(k.VolumeSize), // checked by validate
		MaxVolumeSize:   resource.MustParse(k.MaxVolumeSize),
		ImagePullPolicy: corev1.PullPolicy(k.ImagePullPolicy),
		PodStartTimeout: time.Duration(k.PodStartTimeoutSecs) * time.Second,
		NodeSelector:    k.NodeSelector,
		NodeLostGrace:   time.Duration(k.NodeLostSecs) * time.Second,
		Image:           sc.Image, Timeout: time.Duration(sc.TimeoutSecs) * time.Second,
		TransferHostNetwork: k.TransferHostNetwork, ExtraEnv: env, MaxConcurrent: sc.MaxConcurrent,
		MaxBrowsers: s.cfg.Files.Browse.MaxContainers, BrowseIdle: time.Duration(s.cfg.Files.Browse.IdleSecs) * time.Second,
		Logger: s.log,
	}
}
