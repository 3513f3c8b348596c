package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/server/service"
)

// A v2 shell's pod runs the holder (cairn-sidecar hold) as its main
// process instead of an idle one: the holder makes the shell's PTY itself,
// so the container has no TTY and writes nothing of the session, and the
// kubelet's log of it stays empty. The shell image the operator chose
// need not carry the holder: an init container from the sidecar image
// copies the binary onto a memory-backed volume the shell's container
// mounts read-only. Servers reach the holder through an exec of its relay.

// HolderDir is where a holder pod's containers find the holder binary.
const HolderDir = "/opt/cairn"

const (
	holderBinary  = HolderDir + "/cairn-sidecar"
	sidecarBinary = "/cairn-sidecar" // in the sidecar image
	// holderVolume holds the binary (some 12 MiB), runVolume the holder's
	// socket and recording.
	holderVolume = "holder"
	runVolume    = "run"
	installName  = "install-holder"
)

// holderVolumeSize bounds the volume the binary is copied onto.
var holderVolumeSize = resource.MustParse("64Mi")

// StartHolder creates the pod of a v2 shell and waits until it runs: the
// shell pod's posture (shellPod), with the holder as its main process,
// configured by cfg (its Argv is the shell's) and proving requests with
// key, and no TTY or stdin. It returns the pod's name. Reasons:
// shell_image_missing (the shell's or the sidecar's image is not on the
// node), docker_unavailable, internal.
func (s *Shells) StartHolder(ctx context.Context, spec service.ShellSpec, cfg holder.Config, key []byte) (string, error) {
	pod, err := s.holderPod(spec, cfg, key)
	if err != nil {
		return "", err
	}
	made, err := s.createPod(ctx, pod, "the shell pod")
	if err != nil {
		return "", err
	}
	if err := s.awaitStart(ctx, made.Name, "the shell pod", holderStarted); err != nil {
		s.deletePod(ctx, made.Name, 0)
		return "", s.holderStartError(err)
	}
	return made.Name, nil
}

// holderPod is shellPod with the holder in it: the init container that
// installs it, its binary's volume (read-only to the shell), its private
// run directory, and its command and configuration in the shell's
// container.
func (s *Shells) holderPod(spec service.ShellSpec, cfg holder.Config, key []byte) (*corev1.Pod, error) {
	pod, err := s.shellPod(spec)
	if err != nil {
		return nil, err
	}
	cfg.Argv = s.shellArgv()
	env, err := holder.Env(cfg, key)
	if err != nil {
		return nil, cairn.Internal("the holder's configuration could not be written", err)
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: holderVolume, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &holderVolumeSize}}},
		s.scratch(runVolume))
	pod.Spec.InitContainers = []corev1.Container{s.installContainer()}
	c := &pod.Spec.Containers[0]
	c.Command = []string{holderBinary, holder.CommandHold}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: v})
	}
	c.VolumeMounts = append(c.VolumeMounts,
		corev1.VolumeMount{Name: holderVolume, MountPath: HolderDir, ReadOnly: true},
		corev1.VolumeMount{Name: runVolume, MountPath: holder.DefaultRunDir})
	return pod, nil
}

// installContainer copies the holder from the sidecar image, which has no
// cp, onto its volume: the shell's user, no capabilities, a read-only
// root, the sidecars' memory bound.
func (s *Shells) installContainer() corev1.Container {
	return corev1.Container{
		Name: installName, Image: s.cfg.Image, ImagePullPolicy: s.cfg.ImagePullPolicy,
		Command:         []string{sidecarBinary, holder.CommandInstall, holderBinary},
		WorkingDir:      "/",
		VolumeMounts:    []corev1.VolumeMount{{Name: holderVolume, MountPath: HolderDir}},
		SecurityContext: hardened(s.uid, s.gid, nil),
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: sidecarMemory},
			Requests: corev1.ResourceList{corev1.ResourceMemory: sidecarMemoryRequest, corev1.ResourceCPU: sidecarCPURequest},
		},
	}
}

// errInstallFailed is what holderStarted returns when the init container
// cannot start or ended without installing the holder.
var errInstallFailed = errors.New("the holder's install failed")

// holderStarted is started, once the holder's install went well: an
// install that cannot start (its image is missing) or failed ends the
// wait, where started would wait out the timeout or take the failed pod
// for a running one.
func holderStarted(pod *corev1.Pod) (bool, error) {
	install := &corev1.Pod{Status: corev1.PodStatus{ContainerStatuses: pod.Status.InitContainerStatuses}}
	if r := startFailure(install); r != "" {
		return false, fmt.Errorf("%w: %s", errInstallFailed, r)
	}
	if t := terminated(install); t != nil && t.ExitCode != 0 {
		return false, fmt.Errorf("%w: exit code %d (%s)", errInstallFailed, t.ExitCode, t.Reason)
	}
	return started(pod)
}

// holderStartError is startError, naming the sidecar image when the
// install's is missing.
func (s *Shells) holderStartError(err error) error {
	if !errors.Is(err, errInstallFailed) {
		return s.startError(err)
	}
	if strings.Contains(err.Error(), "Image") {
		return &cairn.Error{Reason: cairn.ReasonShellImageMissing, Err: err,
			Detail: fmt.Sprintf("the sidecar image '%s', which carries the shell's holder, is not on the node; an operator loads it (make images, then make k8s-up)", s.cfg.Image)}
	}
	return unavailable("install the holder in the shell pod", err)
}

// DialHolder runs the holder's relay in the pod (an exec with stdin and
// stdout, no TTY, as the shell's user) and returns the stream to its
// socket. The exec is opened in the background: a failure to open it
// ends the stream, which its first read reports. Reasons: shell_not_found
// (no such pod, or it is not running), docker_unavailable.
func (s *Shells) DialHolder(ctx context.Context, name string) (net.Conn, error) {
	name, err := objectName(name)
	if err != nil {
		return nil, err
	}
	if err := s.holderRunning(ctx, name); err != nil {
		return nil, err
	}
	exec, err := s.execExecutor(name, &corev1.PodExecOptions{Container: KindShell,
		Command: []string{holderBinary, holder.CommandRelay}, Stdin: true, Stdout: true})
	if err != nil {
		return nil, unavailable("reach the shell's holder", err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// The stream outlives the dial's context, as a connection does; Close
	// ends it.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		err := exec.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW})
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err)
		inR.CloseWithError(io.ErrClosedPipe)
		cancel()
	}()
	return holder.NewStreamConn(outR, inW, func() error {
		cancel()
		_ = inW.Close() // a pipe's Close cannot fail
		return outR.Close()
	}), nil
}

// holderRunning answers shell_not_found unless the pod exists, is not
// being deleted, and its holder runs; volume_node_unavailable while its
// node is not ready (the holder cannot be reached through it, and may be
// again if the node returns before kubernetes.nodeLostSecs).
func (s *Shells) holderRunning(ctx context.Context, name string) error {
	pod, err := s.api.pods(s.cfg.Namespace).Get(ctx, name, getOpts)
	switch {
	case apierrors.IsNotFound(err):
		return &cairn.Error{Reason: cairn.ReasonShellNotFound, Err: err, Detail: "the shell's pod is gone"}
	case err != nil:
		return unavailable("reach the shell's holder", err)
	case pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning || terminated(pod) != nil:
		return &cairn.Error{Reason: cairn.ReasonShellNotFound, Detail: "the shell's pod is not running",
			Err: fmt.Errorf("pod %s is %s", name, podState(pod))}
	}
	node, err := s.api.nodes().Get(ctx, pod.Spec.NodeName, getOpts)
	if err == nil && !nodeReady(node) {
		return cairn.Errorf(cairn.ReasonVolumeNodeUnavailable,
			"the shell runs on node %s, which is not ready; it ends (node_lost) unless the node is back within %s",
			node.Name, s.cfg.NodeLostGrace)
	}
	return nil // a node this server may not read is reached through, or not, as it is
}
