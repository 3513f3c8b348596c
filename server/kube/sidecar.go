package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/oklog/ulid/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Sidecar pod limits, as on Docker. Pids are bounded by the
// node (the kubelet's podPidsLimit), not per pod.
const sidecarGrace = 5 // seconds between SIGTERM and SIGKILL

var (
	sidecarMemory        = resource.MustParse("128Mi")
	sidecarMemoryRequest = resource.MustParse("32Mi")
	sidecarCPURequest    = resource.MustParse("10m")
)

// Runtime runs cairn's volumes and sidecars on one Kubernetes namespace.
type Runtime struct {
	*cluster
	slots   chan struct{}
	browse  *browsePods
	watches service.Watchers // ended by StopBrowse and CloseBrowsers
}

var _ service.Runtime = (*Runtime)(nil)

// New returns a Runtime on the cluster cfg names; it does not call the
// API (Ping does).
func New(cfg Config) (*Runtime, error) {
	c, err := connect(cfg)
	if err != nil {
		return nil, err
	}
	return &Runtime{cluster: c, slots: make(chan struct{}, c.cfg.MaxConcurrent),
		browse: &browsePods{byWS: map[string]*browsePod{}}}, nil
}

// RunSidecar runs one sidecar pod to completion: take a slot, create the
// pod, wait for its container to end (bounded by the timeout), read its
// log and always delete it. Reasons: docker_unavailable, sidecar_busy,
// sidecar_timeout, container_start_timeout, volume_node_unavailable.
func (r *Runtime) RunSidecar(ctx context.Context, spec service.SidecarSpec) (run *service.SidecarRun, err error) {
	release, err := service.TakeSidecarSlot(ctx, r.slots)
	if err != nil {
		return nil, err
	}
	defer release()
	defer service.ObserveSidecar(r.cfg.OnSidecar, spec.Command, time.Now(), &run, &err)

	pod, err := r.sidecarPod(spec)
	if err != nil {
		return nil, err
	}
	made, err := r.createPod(ctx, pod, "the sidecar pod")
	if err != nil {
		return nil, err
	}
	defer r.deletePod(ctx, made.Name, 0)
	if spec.Dialog != nil {
		code, out, err := r.runDialog(ctx, made.Name, spec)
		if err != nil {
			return nil, err
		}
		return &service.SidecarRun{ExitCode: code, Output: out}, nil
	}
	code, err := r.waitSidecar(ctx, made.Name, spec.Command)
	if err != nil {
		return nil, err
	}
	out, err := r.logs(ctx, made.Name)
	if err != nil {
		return nil, err
	}
	return &service.SidecarRun{ExitCode: code, Output: out}, nil
}

// sidecarPod is the hardened pod of one run. activeDeadlineSeconds is the
// timeout plus the grace, so the kubelet ends a run this server no longer
// watches (it crashed); the server itself stops it at the timeout.
func (r *Runtime) sidecarPod(spec service.SidecarSpec) (*corev1.Pod, error) {
	claim, err := objectName(spec.VolumeName)
	if err != nil {
		return nil, err
	}
	name, err := objectName(fmt.Sprintf("%s.%s.%s.%s", r.cfg.AppName, spec.Role, spec.Subject, ulid.Make()))
	if err != nil {
		return nil, err
	}
	meta := r.meta(name, map[string]string{
		LabelRole: "sidecar", LabelSidecar: "true", LabelCommand: spec.Command, LabelWorkspace: spec.WorkspaceID,
	}, map[string]string{})
	pod := r.podBase(meta, claim, sidecarGrace)
	readOnly := sidecar.ReadOnlyMount(spec.Command)
	pod.Spec.Volumes = []corev1.Volume{workspaceVolume(claim, readOnly)}
	deadline := int64(r.cfg.Timeout/time.Second) + sidecarGrace
	pod.Spec.ActiveDeadlineSeconds = &deadline
	pod.Spec.HostNetwork = spec.Transfer && r.cfg.TransferHostNetwork
	pod.Spec.Containers = []corev1.Container{{
		Name:            "sidecar",
		Image:           r.cfg.Image,
		ImagePullPolicy: r.cfg.ImagePullPolicy,
		Command:         []string{"/cairn-sidecar"},
		Args:            []string{spec.Command},
		Env:             r.env(spec),
		WorkingDir:      "/",
		VolumeMounts:    []corev1.VolumeMount{workspaceMount(readOnly)},
		SecurityContext: hardened(0, 0, sidecar.Capabilities(spec.Command)),
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: sidecarMemory},
			Requests: corev1.ResourceList{corev1.ResourceMemory: sidecarMemoryRequest, corev1.ResourceCPU: sidecarCPURequest},
		},
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		// A conversation's grants come in on stdin, open once: the
		// sidecar reads end of file when the server lets go.
		Stdin: spec.Dialog != nil, StdinOnce: spec.Dialog != nil,
	}}
	return pod, nil
}

// env renders the protocol variables, plus the deployment's extras for
// transfer sidecars, in a stable order.
func (r *Runtime) env(spec service.SidecarSpec) []corev1.EnvVar {
	vars := map[string]string{}
	if spec.Transfer {
		for k, v := range r.cfg.ExtraEnv {
			vars[k] = v
		}
	}
	for k, v := range spec.Env {
		vars[k] = v
	}
	env := make([]corev1.EnvVar, 0, len(vars))
	for k, v := range vars {
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	return env
}

// waitSidecar waits for the sidecar's container to end and returns its
// exit code. A pod that does not start within the pod start timeout is
// container_start_timeout, one that cannot (its image is not on the node)
// docker_unavailable; past the sidecar timeout the pod is deleted and the
// run is sidecar_timeout.
func (r *Runtime) waitSidecar(ctx context.Context, name, command string) (int, error) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()
	if err := r.waitStarted(ctx, wctx, name, command); err != nil {
		return 0, err
	}
	return r.waitEnded(ctx, wctx, name, command)
}

// waitStarted waits, within the pod start timeout, for the sidecar's
// container to run; wctx carries the sidecar timeout.
func (r *Runtime) waitStarted(ctx, wctx context.Context, name, command string) error {
	err := r.awaitStart(wctx, name, fmt.Sprintf("the '%s' sidecar pod", command), started)
	if err == nil || ctx.Err() == nil && wctx.Err() == nil && cairn.ErrorReason(err) == cairn.ReasonContainerStartTimeout {
		return err
	}
	return r.sidecarWaitError(ctx, wctx, err, name, command)
}

// waitEnded waits, within wctx's sidecar timeout, for the container to
// end, and returns its exit code.
func (r *Runtime) waitEnded(ctx, wctx context.Context, name, command string) (int, error) {
	pod, err := r.waitPod(wctx, name, func(pod *corev1.Pod) (bool, error) { return terminated(pod) != nil, nil })
	if err != nil {
		return 0, r.sidecarWaitError(ctx, wctx, err, name, command)
	}
	return int(terminated(pod).ExitCode), nil
}

func (r *Runtime) sidecarWaitError(ctx, wctx context.Context, err error, name, command string) error {
	switch {
	case ctx.Err() != nil:
		return unavailable("wait for the sidecar", ctx.Err())
	case wctx.Err() != nil:
		r.deletePod(ctx, name, sidecarGrace)
		return service.SidecarTimedOut(command, r.cfg.Timeout)
	case errors.Is(err, errPodGone):
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: fmt.Sprintf("the '%s' sidecar pod was deleted before it ended", command)}
	case errors.Is(err, errCannotStart):
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: fmt.Sprintf("the '%s' sidecar pod cannot start (is the image '%s' on the node?)", command, r.cfg.Image)}
	default:
		return unavailable("wait for the sidecar", err)
	}
}

// logs reads the container's output, stdout and stderr as the kubelet
// interleaved them, bounded.
func (r *Runtime) logs(ctx context.Context, name string) ([]byte, error) {
	limit := int64(sidecar.MaxOutput)
	rc, err := r.api.podLogs(r.cfg.Namespace, name, &corev1.PodLogOptions{Container: "sidecar", LimitBytes: &limit}).Stream(ctx)
	if err != nil {
		return nil, unavailable("read the sidecar output", err)
	}
	defer rc.Close()
	out, err := io.ReadAll(io.LimitReader(rc, sidecar.MaxOutput))
	if err != nil {
		return nil, unavailable("read the sidecar output", err)
	}
	return out, nil
}
