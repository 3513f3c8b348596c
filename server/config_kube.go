package server

import (
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cairn-dev/cairn/server/kube"
)

// KubernetesConfig is `kubernetes`: the runtime when workspace.volumeType
// is kubernetes (K8S.md §1) — workspace volumes as claims, sidecars and
// shells as pods in one namespace.
type KubernetesConfig struct {
	// Kubeconfig is a kubeconfig file; empty with InCluster false means
	// the standard rules ($KUBECONFIG, ~/.kube/config). InCluster uses the
	// pod's service account.
	Kubeconfig string `yaml:"kubeconfig"`
	InCluster  bool   `yaml:"inCluster"`
	Namespace  string `yaml:"namespace"`
	// StorageClass of the claims; empty is the cluster's default class.
	StorageClass string `yaml:"storageClass"`
	AccessMode   string `yaml:"accessMode"`
	// VolumeSize is each claim's request, a Kubernetes quantity (10Gi).
	VolumeSize   string            `yaml:"volumeSize"`
	NodeSelector map[string]string `yaml:"nodeSelector"`
	// ImagePullPolicy of every pod; Never fits images built locally and
	// loaded into the nodes, as cairn's are.
	ImagePullPolicy     string `yaml:"imagePullPolicy"`
	PodStartTimeoutSecs int    `yaml:"podStartTimeoutSecs"`
	// TransferHostNetwork runs transfer sidecars on the node's network: a
	// cluster without Services (the local one of make k8s-up) reaches a
	// store on loopback that way.
	TransferHostNetwork bool `yaml:"transferHostNetwork"`
}

// DefaultKubernetesConfig is the adapter's defaults, spelled out.
func DefaultKubernetesConfig() KubernetesConfig {
	return KubernetesConfig{Namespace: "cairn", AccessMode: string(corev1.ReadWriteOnce), VolumeSize: "1Gi",
		ImagePullPolicy: string(corev1.PullNever), PodStartTimeoutSecs: 60}
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
	if q, err := resource.ParseQuantity(k.VolumeSize); err != nil || q.Sign() <= 0 {
		p.add("kubernetes.volumeSize", "must be a positive quantity such as 10Gi, got %q", k.VolumeSize)
	}
	p.allowed("kubernetes.imagePullPolicy", k.ImagePullPolicy)
	inRange(p, "kubernetes.podStartTimeoutSecs", k.PodStartTimeoutSecs)
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
		ImagePullPolicy: corev1.PullPolicy(k.ImagePullPolicy),
		PodStartTimeout: time.Duration(k.PodStartTimeoutSecs) * time.Second,
		NodeSelector:    k.NodeSelector,
		Image:           sc.Image, Timeout: time.Duration(sc.TimeoutSecs) * time.Second,
		TransferHostNetwork: k.TransferHostNetwork, ExtraEnv: env, MaxConcurrent: sc.MaxConcurrent,
		MaxBrowsers: s.cfg.Files.Browse.MaxContainers, BrowseIdle: time.Duration(s.cfg.Files.Browse.IdleSecs) * time.Second,
		Logger: s.log,
	}
}
