package kube

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/cairn-dev/cairn"
)

// Labels select cairn's objects; they carry the same names as the Docker
// labels. Values that need not be label-safe (instance, token, expiry,
// the original volume name) are annotations.
const (
	LabelApp       = "cairn.app"
	LabelRole      = "cairn.role"
	LabelKind      = "cairn.kind"
	LabelCommand   = "cairn.command"
	LabelWorkspace = "cairn.workspace"
	LabelSidecar   = "cairn.sidecar"

	AnnotationInstance = "cairn.instance"
	AnnotationShell    = "cairn.shell"
	AnnotationToken    = "cairn.token"
	AnnotationExpires  = "cairn.expires"
	AnnotationVolume   = "cairn.volume"
)

// cleanupTimeout bounds every call made on a context detached from the
// request: creates, deletes and the waits behind them.
const cleanupTimeout = 30 * time.Second

var getOpts = metav1.GetOptions{}

// objectName turns a cairn name (a Docker volume or container name, which
// holds upper-case ULIDs) into a Kubernetes object name: ULIDs are
// case-insensitive, so lower-casing keeps names distinct. A name that is
// still no DNS subdomain is a bug of the caller's.
func objectName(name string) (string, error) {
	n := strings.ToLower(name)
	if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
		return "", cairn.Internal(fmt.Sprintf("'%s' cannot name a kubernetes object", name),
			errors.New(strings.Join(errs, "; ")))
	}
	return n, nil
}

// labelValue keeps a value a selector can hold; anything else is dropped
// from labels (its annotation keeps it).
func labelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) > 0 {
		return ""
	}
	return v
}

// meta is the object metadata of one of cairn's objects.
func (c *cluster) meta(name string, labels, annotations map[string]string) metav1.ObjectMeta {
	labels[LabelApp] = c.cfg.AppName
	for k, v := range labels {
		if labelValue(v) == "" {
			delete(labels, k)
		}
	}
	if c.cfg.Instance != "" {
		annotations[AnnotationInstance] = c.cfg.Instance
	}
	return metav1.ObjectMeta{Name: name, Namespace: c.cfg.Namespace, Labels: labels, Annotations: annotations}
}

// createPod creates a pod detached from the request: cut short, the API
// may still make it, and a pod we never learned of would run on. A request
// gone meanwhile deletes what was made.
func (c *cluster) createPod(ctx context.Context, pod *corev1.Pod, what string) (*corev1.Pod, error) {
	if err := c.place(ctx, pod); err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	made, err := c.api.pods(c.cfg.Namespace).Create(cctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, unavailable("create "+what, err)
	}
	if err := ctx.Err(); err != nil {
		c.deletePod(ctx, made.Name, 0)
		return nil, unavailable("create "+what, err)
	}
	return made, nil
}

// deletePod deletes a pod even when the request was cancelled; a failure
// is only logged (the reconciler sweeps leftovers by label).
func (c *cluster) deletePod(ctx context.Context, name string, grace int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if err := c.removePod(ctx, name, grace); err != nil {
		c.log.Warn("delete pod", "pod", name, "err", err)
	}
}

// removePod deletes a pod with the given grace; an absent one is no error.
func (c *cluster) removePod(ctx context.Context, name string, grace int64) error {
	bg := metav1.DeletePropagationBackground
	err := c.api.pods(c.cfg.Namespace).Delete(ctx, name,
		metav1.DeleteOptions{GracePeriodSeconds: &grace, PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}

// awaitStart waits until done says pod started, within the pod start
// timeout or ctx's deadline when that comes first (a shell's or an exec's
// open timeout). A pod that did not start in time is
// container_start_timeout — a node slow, full or unschedulable, not an API
// that did not answer — saying why as the cluster last told it; other
// failures are returned as they are.
func (c *cluster) awaitStart(ctx context.Context, pod, what string, done func(*corev1.Pod) (bool, error)) error {
	began := time.Now()
	wctx, cancel := context.WithTimeout(ctx, c.cfg.PodStartTimeout)
	defer cancel()
	_, err := c.waitPod(wctx, pod, done)
	if errors.Is(err, context.DeadlineExceeded) && !errors.Is(ctx.Err(), context.Canceled) {
		return cairn.Errorf(cairn.ReasonContainerStartTimeout,
			"%s %s did not start in %s (kubernetes.podStartTimeoutSecs, or a shell's or an exec's shell.timeouts.openSecs)%s",
			what, pod, time.Since(began).Round(time.Second), c.notStartedWhy(pod))
	}
	return err
}

// maxWhy bounds the cluster's own words quoted in an error.
const maxWhy = 300

// notStartedWhy is what the API last said of a pod that did not start —
// the scheduler's message, else the reason a container waits — as a
// clause, or "" when it says nothing.
func (c *cluster) notStartedWhy(pod string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := c.api.pods(c.cfg.Namespace).Get(ctx, pod, getOpts)
	if err != nil {
		return ""
	}
	why := ""
	for _, cond := range p.Status.Conditions {
		if cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse {
			why = cond.Message
		}
	}
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := cs.State.Waiting; why == "" && w != nil && w.Reason != "" {
			why = "container " + cs.Name + " waits: " + w.Reason
		}
	}
	if why == "" {
		return ""
	}
	if len(why) > maxWhy {
		why = why[:maxWhy] + "…"
	}
	return "; the cluster says: " + strings.TrimSpace(why)
}

// errPodGone is what waitPod returns when the pod was deleted; the last
// state seen comes with it.
var errPodGone = errors.New("pod deleted")

// waitPod watches one pod until done says so, and returns the pod as done
// saw it. A deletion ends the wait with errPodGone and the pod's last
// state. Watches the API closes are resumed; every wait ends with ctx.
func (c *cluster) waitPod(ctx context.Context, name string, done func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	pods := c.api.pods(c.cfg.Namespace)
	for {
		list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		if err != nil {
			return nil, err
		}
		if len(list.Items) == 0 {
			return nil, errPodGone
		}
		pod := &list.Items[0]
		if ok, err := done(pod); ok || err != nil {
			return pod, err
		}
		pod, err = c.watchPod(ctx, name, list.ResourceVersion, done)
		if pod != nil || err != nil {
			return pod, err
		}
	}
}

// watchPod is one watch of waitPod's; nil, nil means the API ended it and
// the caller lists again.
func (c *cluster) watchPod(ctx context.Context, name, rv string, done func(*corev1.Pod) (bool, error)) (*corev1.Pod, error) {
	w, err := c.api.pods(c.cfg.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(), ResourceVersion: rv,
	})
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case ev, open := <-w.ResultChan():
			if !open {
				return nil, nil
			}
			pod, ok := ev.Object.(*corev1.Pod)
			switch {
			case ev.Type == watch.Error:
				return nil, nil // an expired resource version: list again
			case !ok:
				continue
			case ev.Type == watch.Deleted:
				return pod, errPodGone
			}
			if ok, err := done(pod); ok || err != nil {
				return pod, err
			}
		}
	}
}

// terminated returns the state of the pod's first container once it ended.
func terminated(pod *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, st := range pod.Status.ContainerStatuses {
		if st.State.Terminated != nil {
			return st.State.Terminated
		}
	}
	return nil
}

// startFailure names why a pod's container cannot start, or "" while it
// may still: an image the node lacks (pods never pull) or a spec the
// runtime refuses.
func startFailure(pod *corev1.Pod) string {
	for _, st := range pod.Status.ContainerStatuses {
		if w := st.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImageNeverPull", "ErrImagePull", "ImagePullBackOff", "InvalidImageName",
				"CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return w.Reason
			}
		}
	}
	return ""
}

// errCannotStart is what started returns for a container that will never
// start.
var errCannotStart = errors.New("the pod's container cannot start")

// started reports whether the pod's containers run or ran; a start
// failure is errCannotStart, naming its reason.
func started(pod *corev1.Pod) (bool, error) {
	if r := startFailure(pod); r != "" {
		return false, fmt.Errorf("%w: %s", errCannotStart, r)
	}
	if pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return true, nil
	}
	return false, nil
}

// hardened is the container security context every cairn pod has: the
// given user, a read-only root, no capabilities but add, no privilege
// escalation, the runtime's seccomp profile.
func hardened(uid, gid int64, add []string) *corev1.SecurityContext {
	no, yes, nonRoot := false, true, uid != 0
	caps := make([]corev1.Capability, len(add))
	for i, a := range add {
		caps[i] = corev1.Capability(a)
	}
	return &corev1.SecurityContext{
		RunAsUser: &uid, RunAsGroup: &gid, RunAsNonRoot: &nonRoot,
		ReadOnlyRootFilesystem: &yes, AllowPrivilegeEscalation: &no, Privileged: &no,
		Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: caps},
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}

// workspaceVolumeName names the workspace's volume in a pod.
const workspaceVolumeName = "workspace"

// workspaceVolume is the pod volume of a workspace's claim, mounted at
// cairn.MountPath by workspaceMount.
func workspaceVolume(claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: workspaceVolumeName, VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}}
}

func workspaceMount(readOnly bool) corev1.VolumeMount {
	return corev1.VolumeMount{Name: workspaceVolumeName, MountPath: cairn.MountPath, ReadOnly: readOnly}
}

// podBase is the pod-level posture of every cairn pod: never restarted, no
// service account token, no service links in the environment, the
// configured nodes. Its hostname is its role: the pod's name, with dots
// and past 63 characters, is no DNS label.
func (c *cluster) podBase(meta metav1.ObjectMeta, claim string, grace int64) *corev1.Pod {
	no := false
	return &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{
		Hostname:                      "cairn-" + meta.Labels[LabelRole],
		RestartPolicy:                 corev1.RestartPolicyNever,
		AutomountServiceAccountToken:  &no,
		EnableServiceLinks:            &no,
		TerminationGracePeriodSeconds: &grace,
		NodeSelector:                  c.cfg.NodeSelector,
		Volumes:                       []corev1.Volume{workspaceVolume(claim, false)},
	}}
}

// attachExecutor attaches to a pod's container (attachExecutor) or runs
// a command in it (execExecutor), preferring the websocket protocol and
// falling back to SPDY where the API server refuses the upgrade.
func (c *cluster) attachExecutor(name string, opts *corev1.PodAttachOptions) (remotecommand.Executor, error) {
	return c.executor(name, "attach", opts)
}

func (c *cluster) execExecutor(name string, opts *corev1.PodExecOptions) (remotecommand.Executor, error) {
	return c.executor(name, "exec", opts)
}

func (c *cluster) executor(name, subresource string, opts runtime.Object) (remotecommand.Executor, error) {
	u := c.api.core.Post().Namespace(c.cfg.Namespace).Resource("pods").Name(name).
		SubResource(subresource).VersionedParams(opts, parameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(c.rc, "GET", u.String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(c.rc, "POST", u)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}
