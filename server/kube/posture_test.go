package kube

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell/holder"
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

// TestHolderPodPosture: a v2 shell's pod has the shell pod's posture, with
// the holder as its main process (no TTY, no stdin) configured by its
// environment, and an init container as hardened as the rest that
// installs the holder onto a memory-backed volume the shell mounts
// read-only.
func TestHolderPodPosture(t *testing.T) {
	t.Parallel()
	s, err := offline(Config{AppName: "app", Image: "cairn-sidecar:test"}).Shells(ShellConfig{User: "1000:100", StopSecs: 4})
	require.NoError(t, err)
	spec := service.ShellSpec{Name: "app.shell.01JWS.01JSH", ShellID: "01JSH", WorkspaceID: "01JWS",
		VolumeName: "app-01JWS", TokenName: "ops token", Term: "xterm", Expires: time.Unix(1_900_000_000, 0)}
	key := make([]byte, 32)
	pod, err := s.holderPod(spec, holder.Config{ShellID: "01JSH", Cols: 80, Rows: 24, Argv: []string{"/bin/evil"}}, key)
	require.NoError(t, err)
	shell, err := s.shellPod(spec)
	require.NoError(t, err)

	requirePodBase(t, pod, "app-01jws")
	require.Equal(t, shell.ObjectMeta, pod.ObjectMeta, "the shell pod's name, labels and annotations")
	require.True(t, *pod.Spec.ShareProcessNamespace)
	require.Equal(t, int64(4), *pod.Spec.TerminationGracePeriodSeconds)
	require.Nil(t, pod.Spec.SecurityContext, "no fsGroup: the workspace's files keep their owners")

	c := pod.Spec.Containers[0]
	require.Equal(t, []string{HolderDir + "/cairn-sidecar", holder.CommandHold}, c.Command)
	require.False(t, c.TTY, "the holder makes the PTY: the kubelet never sees the session")
	require.False(t, c.Stdin)
	requireHardened(t, c.SecurityContext, "DAC_OVERRIDE")
	require.Equal(t, int64(1000), *c.SecurityContext.RunAsUser)
	require.Equal(t, shell.Spec.Containers[0].Resources, c.Resources)
	require.Equal(t, shell.Spec.Containers[0].Lifecycle, c.Lifecycle)
	require.Equal(t, shell.Spec.Containers[0].Env, c.Env[:len(shell.Spec.Containers[0].Env)], "the session's environment first")
	cfg := holderConfig(t, c.Env)
	require.Equal(t, s.shellArgv(), cfg.Argv, "the shell is the runtime's, whatever the caller said")
	require.Equal(t, 80, cfg.Cols)

	init := pod.Spec.InitContainers
	require.Len(t, init, 1)
	require.Equal(t, "cairn-sidecar:test", init[0].Image)
	require.Equal(t, []string{"/cairn-sidecar", holder.CommandInstall, HolderDir + "/cairn-sidecar"}, init[0].Command)
	require.Equal(t, corev1.PullNever, init[0].ImagePullPolicy)
	requireHardened(t, init[0].SecurityContext)
	require.Equal(t, int64(1000), *init[0].SecurityContext.RunAsUser)
	require.Equal(t, "128Mi", init[0].Resources.Limits.Memory().String())
	require.Empty(t, init[0].Env, "the key stays in the holder's container")

	volumes := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := func(c corev1.Container) map[string]corev1.VolumeMount {
		m := map[string]corev1.VolumeMount{}
		for _, vm := range c.VolumeMounts {
			m[vm.MountPath] = vm
		}
		return m
	}
	bin := mounts(c)[HolderDir]
	require.True(t, bin.ReadOnly, "the shell cannot change the holder")
	require.False(t, mounts(init[0])[HolderDir].ReadOnly)
	require.Equal(t, bin.Name, mounts(init[0])[HolderDir].Name)
	require.Len(t, init[0].VolumeMounts, 1, "the install sees no workspace")
	run := mounts(c)[holder.DefaultRunDir]
	require.False(t, run.ReadOnly)
	for _, name := range []string{bin.Name, run.Name} {
		require.Equal(t, corev1.StorageMediumMemory, volumes[name].EmptyDir.Medium, name)
		require.NotNil(t, volumes[name].EmptyDir.SizeLimit, name)
	}
}

// holderConfig reads the holder's configuration back from a container's
// environment, and checks the key is there.
func holderConfig(t *testing.T, env []corev1.EnvVar) holder.Config {
	t.Helper()
	var cfg holder.Config
	found := map[string]bool{}
	for _, e := range env {
		switch e.Name {
		case holder.EnvConfig:
			require.NoError(t, json.Unmarshal([]byte(e.Value), &cfg))
		case holder.EnvKey:
			require.Len(t, e.Value, 64)
		default:
			continue
		}
		found[e.Name] = true
	}
	require.Len(t, found, 2, "the configuration and the key")
	return cfg
}

// TestServePodPosture: the pods a workspace's files are served from —
// the reader, the writer and the watcher — mount only its claim, read-only
// but for the writer, with only the capabilities their work needs, and
// end by their deadline.
func TestServePodPosture(t *testing.T) {
	t.Parallel()
	r := offline(Config{AppName: "app", Timeout: 90 * time.Second})
	target := service.BrowseTarget{WorkspaceID: "01JWS", VolumeName: "app-01JWS"}
	writer := target
	writer.Writable = true
	reader, err := r.browsePodSpec(target)
	require.NoError(t, err)
	write, err := r.browsePodSpec(writer)
	require.NoError(t, err)
	watcher, err := r.watcherPodSpec(writer, 2*time.Second) // a watcher never writes, whatever it is asked
	require.NoError(t, err)
	for _, tc := range []struct {
		pod      *corev1.Pod
		role     string
		readOnly bool
		caps     []corev1.Capability
		env      map[string]string
	}{
		{reader, browseRole, true, []corev1.Capability{"DAC_READ_SEARCH"}, nil},
		{write, writerRole, false, []corev1.Capability{"DAC_OVERRIDE", "CHOWN", "FOWNER"},
			map[string]string{sidecar.EnvWritable: "1"}},
		{watcher, watcherRole, true, []corev1.Capability{"DAC_READ_SEARCH"}, map[string]string{sidecar.EnvWatchPollMS: "2000"}},
	} {
		t.Run(tc.role, func(t *testing.T) {
			requirePodBase(t, tc.pod, "app-01jws")
			require.Regexp(t, `^app\.`+tc.role+`\.01jws\.[0-9a-z]{26}$`, tc.pod.Name)
			require.Equal(t, "sidecar", tc.pod.Labels[LabelRole], "the sidecar sweep covers a leftover")
			require.True(t, r.isBrowser(tc.pod), "not counted as a mount")
			require.Equal(t, int64(95), *tc.pod.Spec.ActiveDeadlineSeconds)
			require.False(t, tc.pod.Spec.HostNetwork)
			require.Equal(t, tc.readOnly, tc.pod.Spec.Volumes[0].PersistentVolumeClaim.ReadOnly)
			c := tc.pod.Spec.Containers[0]
			require.Equal(t, tc.readOnly, c.VolumeMounts[0].ReadOnly)
			requireHardened(t, c.SecurityContext, tc.caps...)
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = e.Value
			}
			for k, v := range tc.env {
				require.Equal(t, v, env[k])
			}
			_, writable := env[sidecar.EnvWritable]
			require.Equal(t, !tc.readOnly, writable)
		})
	}
}
