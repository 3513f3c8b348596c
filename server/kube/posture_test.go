package kube

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// offline is a Runtime that never calls the API: the pod specs it builds
// are checked here, the pods themselves on a real cluster (runtimetest).
func offline(cfg Config) *Runtime {
	c := &cluster{cfg: cfg.withDefaults()}
	return &Runtime{cluster: c, slots: make(chan struct{}, 1)}
}

func requireHardened(t *testing.T, sc *corev1.SecurityContext, add ...corev1.Capability) {
	t.Helper()
	require.True(t, *sc.ReadOnlyRootFilesystem)
	require.False(t, *sc.AllowPrivilegeEscalation)
	require.False(t, *sc.Privileged)
	require.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	require.ElementsMatch(t, add, sc.Capabilities.Add)
	require.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, sc.SeccompProfile.Type)
}

func requirePodBase(t *testing.T, pod *corev1.Pod, claim string) {
	t.Helper()
	require.Equal(t, corev1.RestartPolicyNever, pod.Spec.RestartPolicy)
	require.False(t, *pod.Spec.AutomountServiceAccountToken, "no API token in cairn's pods")
	require.False(t, *pod.Spec.EnableServiceLinks)
	require.Equal(t, claim, pod.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	require.Equal(t, cairn.MountPath, pod.Spec.Containers[0].VolumeMounts[0].MountPath)
	require.Equal(t, corev1.PullNever, pod.Spec.Containers[0].ImagePullPolicy, "cairn's images are never pulled")
}

func TestSidecarPodPosture(t *testing.T) {
	t.Parallel()
	r := offline(Config{AppName: "app", Instance: "i1", Timeout: 90 * time.Second, TransferHostNetwork: true,
		ExtraEnv: map[string]string{"HTTPS_PROXY": "p"}})
	spec := service.SidecarSpec{Command: sidecar.CommandPut, Role: "cairn-upload", Subject: "01JART",
		WorkspaceID: "01JWS", VolumeName: "app-01JWS", Env: map[string]string{sidecar.EnvURL: "u"}, Transfer: true}

	t.Run("OKTransfer", func(t *testing.T) {
		t.Parallel()
		pod, err := r.sidecarPod(spec)
		require.NoError(t, err)
		requirePodBase(t, pod, "app-01jws")
		require.Regexp(t, `^app\.cairn-upload\.01jart\.[0-9a-z]{26}$`, pod.Name)
		require.Equal(t, map[string]string{LabelApp: "app", LabelRole: "sidecar", LabelSidecar: "true",
			LabelCommand: sidecar.CommandPut, LabelWorkspace: "01JWS"}, pod.Labels)
		require.Equal(t, "i1", pod.Annotations[AnnotationInstance])
		require.Equal(t, int64(95), *pod.Spec.ActiveDeadlineSeconds, "the kubelet ends a run nobody watches")
		require.True(t, pod.Spec.HostNetwork)
		require.Equal(t, "cairn-sidecar", pod.Spec.Hostname, "a DNS label, which the pod's name is not")
		c := pod.Spec.Containers[0]
		require.Equal(t, []string{"/cairn-sidecar"}, c.Command)
		require.Equal(t, []string{sidecar.CommandPut}, c.Args)
		require.Equal(t, []corev1.EnvVar{{Name: sidecar.EnvURL, Value: "u"}, {Name: "HTTPS_PROXY", Value: "p"}}, c.Env)
		requireHardened(t, c.SecurityContext, "DAC_OVERRIDE")
		require.Equal(t, "128Mi", c.Resources.Limits.Memory().String())
	})

	t.Run("OKPrepNoCapsNoNetworkNoExtras", func(t *testing.T) {
		t.Parallel()
		prep := spec
		prep.Command, prep.Transfer = sidecar.CommandPrep, false
		pod, err := r.sidecarPod(prep)
		require.NoError(t, err)
		require.False(t, pod.Spec.HostNetwork)
		requireHardened(t, pod.Spec.Containers[0].SecurityContext)
		require.Equal(t, []corev1.EnvVar{{Name: sidecar.EnvURL, Value: "u"}}, pod.Spec.Containers[0].Env)
	})

	t.Run("ErrInternalOnUnnameableVolume", func(t *testing.T) {
		t.Parallel()
		bad := spec
		bad.VolumeName = "no_underscores"
		_, err := r.sidecarPod(bad)
		require.Equal(t, cairn.ReasonInternal, cairn.ErrorReason(err))
	})
}

func TestShellPodPosture(t *testing.T) {
	t.Parallel()
	s, err := offline(Config{AppName: "app"}).Shells(ShellConfig{User: "1000:100", StopSecs: 4})
	require.NoError(t, err)
	expires := time.Unix(1_900_000_000, 0)
	pod, err := s.shellPod(service.ShellSpec{Name: "app.shell.01JWS.01JSH", ShellID: "01JSH", WorkspaceID: "01JWS",
		VolumeName: "app-01JWS", TokenName: "ops token", Term: "xterm", Expires: expires})
	require.NoError(t, err)
	requirePodBase(t, pod, "app-01jws")
	require.Equal(t, "app.shell.01jws.01jsh", pod.Name)
	require.Equal(t, "app.shell.01JWS.01JSH", pod.Annotations[AnnotationName])
	require.Equal(t, "ops token", pod.Annotations[AnnotationToken], "a token name need not be label-safe")
	require.Equal(t, "1900000000", pod.Annotations[AnnotationExpires])
	require.True(t, *pod.Spec.ShareProcessNamespace, "pause is PID 1, the init")
	require.Equal(t, int64(4), *pod.Spec.TerminationGracePeriodSeconds)
	c := pod.Spec.Containers[0]
	require.False(t, c.TTY, "the shell's terminal is the exec's: the kubelet logs a container's own")
	require.False(t, c.Stdin)
	require.Equal(t, holdArgv, c.Command)
	require.Equal(t, []string{"/bin/sh", "-c", "kill -s HUP -1"}, c.Lifecycle.PreStop.Exec.Command)
	require.Equal(t, int64(1000), *c.SecurityContext.RunAsUser)
	require.True(t, *c.SecurityContext.RunAsNonRoot)
	requireHardened(t, c.SecurityContext, "DAC_OVERRIDE")
	require.Equal(t, corev1.StorageMediumMemory, pod.Spec.Volumes[1].EmptyDir.Medium)
	require.Equal(t, "512Mi", c.Resources.Limits.Memory().String())

	_, err = offline(Config{}).Shells(ShellConfig{User: "cairn"})
	require.Error(t, err, "a pod names its user by number")
}
