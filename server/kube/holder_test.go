package kube

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/cairn-dev/cairn"
)

// TestHolderStartedEndsOnAFailedInstall: a holder pod's wait ends as soon
// as its install cannot start or failed, with the reason a caller can act
// on; otherwise it waits for the pod to run.
func TestHolderStartedEndsOnAFailedInstall(t *testing.T) {
	t.Parallel()
	s, err := offline(Config{}).Shells(ShellConfig{})
	require.NoError(t, err)
	pod := func(phase corev1.PodPhase, install corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{Status: corev1.PodStatus{Phase: phase,
			InitContainerStatuses: []corev1.ContainerStatus{{Name: installName, State: install}}}}
	}
	waiting := func(reason string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason}}
	}
	exited := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}
	}

	for name, tc := range map[string]struct {
		pod    *corev1.Pod
		done   bool
		reason cairn.Reason // "" when the wait goes on or ended well
	}{
		"OKInstalling":              {pod: pod(corev1.PodPending, waiting("PodInitializing"))},
		"OKRunning":                 {pod: pod(corev1.PodRunning, exited(0)), done: true},
		"ErrSidecarImageMissing":    {pod: pod(corev1.PodPending, waiting("ErrImageNeverPull")), reason: cairn.ReasonShellImageMissing},
		"ErrInstallFailed":          {pod: pod(corev1.PodFailed, exited(1)), reason: cairn.ReasonDockerUnavailable},
		"ErrInstallCannotBeCreated": {pod: pod(corev1.PodPending, waiting("CreateContainerError")), reason: cairn.ReasonDockerUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			done, err := holderStarted(tc.pod)
			require.Equal(t, tc.done, done)
			if tc.reason == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.Equal(t, tc.reason, cairn.ErrorReason(s.holderStartError(err)))
		})
	}
}
