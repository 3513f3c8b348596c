package server

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseKubernetesConfig(t *testing.T) {
	t.Parallel()
	c, _, err := ParseConfig([]byte(minimalYAML + `
workspace: {volumeType: kubernetes}
kubernetes:
  kubeconfig: /etc/cairn/kubeconfig
  namespace: team-a
  storageClass: fast
  accessMode: ReadWriteMany
  volumeSize: 20Gi
  maxVolumeSize: 200Gi
  nodeSelector: {disk: ssd}
  imagePullPolicy: IfNotPresent
  podStartTimeoutSecs: 30
  nodeLostSecs: 90
  transferHostNetwork: true
`))
	require.NoError(t, err)
	require.NoError(t, c.Validate())
	require.Equal(t, KubernetesConfig{Kubeconfig: "/etc/cairn/kubeconfig", Namespace: "team-a", StorageClass: "fast",
		AccessMode: "ReadWriteMany", VolumeSize: "20Gi", MaxVolumeSize: "200Gi", NodeSelector: map[string]string{"disk": "ssd"},
		ImagePullPolicy: "IfNotPresent", PodStartTimeoutSecs: 30, NodeLostSecs: 90, TransferHostNetwork: true}, c.Kubernetes)

	t.Run("DefaultsAreValid", func(t *testing.T) {
		t.Parallel()
		c, _, err := ParseConfig([]byte(minimalYAML + "workspace: {volumeType: kubernetes}\n"))
		require.NoError(t, err)
		require.NoError(t, c.Validate())
		require.Equal(t, DefaultKubernetesConfig(), c.Kubernetes)
	})
}

func TestKubernetesConfigValidateRejects(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		mutate func(k *KubernetesConfig)
		want   string
	}{
		"Namespace":       {func(k *KubernetesConfig) { k.Namespace = "Team_A" }, "kubernetes.namespace: must be a DNS label"},
		"LongNamespace":   {func(k *KubernetesConfig) { k.Namespace = string(make([]byte, 64)) }, "kubernetes.namespace"},
		"Both":            {func(k *KubernetesConfig) { k.InCluster, k.Kubeconfig = true, "/x" }, "kubernetes.kubeconfig: cannot be set with kubernetes.inCluster"},
		"AccessMode":      {func(k *KubernetesConfig) { k.AccessMode = "ReadOnlyMany" }, "kubernetes.accessMode: must be one of"},
		"VolumeSize":      {func(k *KubernetesConfig) { k.VolumeSize = "big" }, "kubernetes.volumeSize: must be a positive quantity"},
		"ZeroSize":        {func(k *KubernetesConfig) { k.VolumeSize = "0" }, "kubernetes.volumeSize"},
		"MaxVolumeSize":   {func(k *KubernetesConfig) { k.MaxVolumeSize = "lots" }, "kubernetes.maxVolumeSize: must be a positive quantity"},
		"MaxBelowDefault": {func(k *KubernetesConfig) { k.VolumeSize, k.MaxVolumeSize = "10Gi", "5Gi" }, `kubernetes.maxVolumeSize: must be at least kubernetes.volumeSize (10Gi), got "5Gi"`},
		"PullPolicy":      {func(k *KubernetesConfig) { k.ImagePullPolicy = "Sometimes" }, "kubernetes.imagePullPolicy: must be one of"},
		"PodStartTimeout": {func(k *KubernetesConfig) { k.PodStartTimeoutSecs = 0 }, "kubernetes.podStartTimeoutSecs"},
		"NodeSelector":    {func(k *KubernetesConfig) { k.NodeSelector = map[string]string{"disk": "a b"} }, "kubernetes.nodeSelector"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := validConfig()
			c.Workspace.VolumeType = "kubernetes"
			tc.mutate(&c.Kubernetes)
			require.ErrorContains(t, c.Validate(), tc.want)
		})
	}
	t.Run("OnlyCheckedOnKubernetes", func(t *testing.T) {
		t.Parallel()
		c := validConfig()
		c.Kubernetes.Namespace = "Not Valid"
		require.NoError(t, c.Validate(), "the docker runtime ignores the section")
	})
	t.Run("UnknownRuntime", func(t *testing.T) {
		t.Parallel()
		c := validConfig()
		c.Workspace.VolumeType = "nomad"
		require.ErrorContains(t, c.Validate(), `workspace.volumeType: must be docker or kubernetes, got "nomad"`)
	})
}
