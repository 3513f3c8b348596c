package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/service"
)

// KindShell is the cairn.kind (and cairn.role) of a shell pod.
const KindShell = "shell"

// ShellHome is $HOME in a shell pod, a memory-backed scratch like /tmp.
const ShellHome = "/home/cairn"

// AnnotationName keeps a shell pod's cairn name (ShellSpec.Name), which
// the pod name holds lower-cased.
const AnnotationName = "cairn.name"

// ShellConfig holds the shell pods' settings (the shell.* keys of
// docs/configuration.md); zero values take their defaults. Docker's pids
// and nofile limits have no per-pod equivalent: the node's podPidsLimit
// bounds pids.
type ShellConfig struct {
	Image string // default "cairn-shell:latest"; never pulled
	// Entrypoint is the argv of the shell; empty means the default:
	// bash if the image has it, else sh, under Umask.
	Entrypoint []string
	Umask      string   // default "0000"
	User       string   // default "0:0"
	Env        []string // NAME=value, after cairn's own; never CAIRN_*, TERM or HOME
	MemoryMiB  int64    // default 512
	CPUs       float64  // default 1
	TmpfsMiB   int64    // default 64, each of /tmp and $HOME
	StopSecs   int      // default 3: SIGHUP, then SIGKILL
}

// Shells creates, lists and removes shell pods in the runtime's namespace.
type Shells struct {
	*cluster
	opts     ShellConfig
	uid, gid int64
}

var _ service.ShellRuntime = (*Shells)(nil)

// Shells returns the shell runtime on r's cluster. A User that is not
// "uid:gid" in numbers is an error: a pod names its user by number.
func (r *Runtime) Shells(cfg ShellConfig) (*Shells, error) {
	cfg.Image = cmp.Or(cfg.Image, "cairn-shell:latest")
	cfg.Umask = cmp.Or(cfg.Umask, "0000")
	cfg.User = cmp.Or(cfg.User, "0:0")
	cfg.MemoryMiB = cmp.Or(cfg.MemoryMiB, 512)
	cfg.CPUs = cmp.Or(cfg.CPUs, 1)
	cfg.TmpfsMiB = cmp.Or(cfg.TmpfsMiB, 64)
	cfg.StopSecs = cmp.Or(cfg.StopSecs, 3)
	uid, gid, err := parseUser(cfg.User)
	if err != nil {
		return nil, err
	}
	return &Shells{cluster: r.cluster, opts: cfg, uid: uid, gid: gid}, nil
}

func parseUser(user string) (uid, gid int64, err error) {
	u, g, _ := strings.Cut(user, ":")
	uid, err = strconv.ParseInt(u, 10, 32)
	if err == nil {
		gid, err = strconv.ParseInt(cmp.Or(g, u), 10, 32)
	}
	if err != nil || uid < 0 || gid < 0 {
		return 0, 0, fmt.Errorf("shell user %q: kubernetes needs a numeric uid:gid", user)
	}
	return uid, gid, nil
}

// CreateShell creates the pod of spec and waits for it to run; Start runs
// the shell in it. Reasons: those of runPod.
func (s *Shells) CreateShell(ctx context.Context, spec service.ShellSpec) (ptyshell.Stream, error) {
	pod, err := s.shellPod(spec)
	if err != nil {
		return nil, err
	}
	name, err := s.runPod(ctx, pod, "the shell pod")
	if err != nil {
		return nil, err
	}
	return newShellStream(s, name), nil
}

// runPod creates a session's pod (a shell's, an exec's: what names it)
// and waits until it runs, and returns its name. Like the sidecars'
// create it runs detached from ctx. A pod that cannot start is deleted;
// an image the node lacks is shell_image_missing. Reasons:
// shell_image_missing, docker_unavailable, internal.
func (s *Shells) runPod(ctx context.Context, pod *corev1.Pod, what string) (string, error) {
	made, err := s.createPod(ctx, pod, what)
	if err != nil {
		return "", err
	}
	if err := s.awaitStart(ctx, made.Name, what, started); err != nil {
		s.deletePod(ctx, made.Name, 0)
		return "", s.startError(err)
	}
	return made.Name, nil
}

func (s *Shells) startError(err error) error {
	if errors.Is(err, errCannotStart) && strings.Contains(err.Error(), "Image") {
		return &cairn.Error{Reason: cairn.ReasonShellImageMissing, Err: err,
			Detail: fmt.Sprintf("the shell image '%s' is not on the node; an operator loads it (make images, then make k8s-up)", s.opts.Image)}
	}
	if cairn.ErrorReason(err) == cairn.ReasonContainerStartTimeout {
		return err
	}
	return unavailable("start the shell pod", err)
}

// shellPod is the shell's hardened pod: the one
// volume, the pause container as PID 1 (a shared process namespace, the
// Docker init's part), a read-only root with memory-backed /tmp and home,
// DAC_OVERRIDE only, bounded memory and CPU. Its main process only holds
// it (holdArgv); the shell is an exec in it (session). A preStop hook
// sends every process SIGHUP, as Docker's stop signal does; an
// interactive shell ignores the SIGTERM that follows.
func (s *Shells) shellPod(spec service.ShellSpec) (*corev1.Pod, error) {
	claim, err := objectName(spec.VolumeName)
	if err != nil {
		return nil, err
	}
	name, err := objectName(spec.Name)
	if err != nil {
		return nil, err
	}
	meta := s.meta(name, map[string]string{
		LabelKind: KindShell, LabelRole: KindShell, LabelWorkspace: spec.WorkspaceID,
	}, map[string]string{
		AnnotationName: spec.Name, AnnotationShell: spec.ShellID, AnnotationToken: spec.TokenName,
		AnnotationExpires: strconv.FormatInt(spec.Expires.Unix(), 10),
	})
	pod := s.podBase(meta, claim, int64(s.opts.StopSecs))
	yes := true
	pod.Spec.ShareProcessNamespace = &yes
	pod.Spec.Volumes = append(pod.Spec.Volumes, s.scratch("tmp"), s.scratch("home"))
	pod.Spec.Containers = []corev1.Container{s.shellContainer(spec)}
	return pod, nil
}

func (s *Shells) scratch(name string) corev1.Volume {
	size := resource.NewQuantity(s.opts.TmpfsMiB<<20, resource.BinarySI)
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{
		EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: size}}}
}

func (s *Shells) shellContainer(spec service.ShellSpec) corev1.Container {
	env := s.sessionEnv([]corev1.EnvVar{{Name: "TERM", Value: spec.Term}}, spec.WorkspaceID, spec.WorkspaceName,
		"CAIRN_SHELL_ID", spec.ShellID)
	mem := resource.NewQuantity(s.opts.MemoryMiB<<20, resource.BinarySI)
	cpu := resource.NewMilliQuantity(int64(s.opts.CPUs*1000), resource.DecimalSI)
	return corev1.Container{
		Name: KindShell, Image: s.opts.Image, ImagePullPolicy: s.cfg.ImagePullPolicy,
		Command: holdArgv, Env: env, WorkingDir: cairn.MountPath,
		VolumeMounts: []corev1.VolumeMount{workspaceMount(false),
			{Name: "tmp", MountPath: "/tmp"}, {Name: "home", MountPath: ShellHome}},
		SecurityContext: hardened(s.uid, s.gid, []string{"DAC_OVERRIDE"}),
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: *mem, corev1.ResourceCPU: *cpu},
			Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Mi"), corev1.ResourceCPU: resource.MustParse("10m")},
		},
		Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
			Exec: &corev1.ExecAction{Command: []string{"/bin/sh", "-c", "kill -s HUP -1"}}}},
	}
}

// sessionEnv is a session container's environment: lead, then cairn's
// variables (idEnv holds the session's ID), then the operator's.
func (s *Shells) sessionEnv(lead []corev1.EnvVar, workspaceID, workspaceName, idEnv, id string, execEnv ...string) []corev1.EnvVar {
	env := append(lead, corev1.EnvVar{Name: "LANG", Value: "C.UTF-8"}, corev1.EnvVar{Name: "HOME", Value: ShellHome},
		corev1.EnvVar{Name: "CAIRN_WORKSPACE_ID", Value: workspaceID},
		corev1.EnvVar{Name: "CAIRN_WORKSPACE_NAME", Value: workspaceName}, corev1.EnvVar{Name: idEnv, Value: id})
	// An exec's own variables come before the operator's, which win.
	for _, kv := range append(execEnv, s.opts.Env...) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	return env
}

// shellArgv is the shell the session runs: the configured one, or the
// default: bash if the image has it, else sh, under Umask.
func (s *Shells) shellArgv() []string {
	if len(s.opts.Entrypoint) > 0 {
		return s.opts.Entrypoint
	}
	return []string{"/bin/sh", "-c", "umask " + s.opts.Umask +
		"; if command -v bash >/dev/null 2>&1; then exec bash; fi; exec sh"}
}

// ListShells lists every shell pod of the app, in any phase.
func (s *Shells) ListShells(ctx context.Context) ([]service.ShellContainer, error) {
	return s.listSessions(ctx, KindShell, AnnotationShell)
}

// listSessions lists every session pod of the app of one kind, in any
// phase, those on a lost node as lost; idAnnotation holds the session's ID.
func (s *Shells) listSessions(ctx context.Context, kind, idAnnotation string) ([]service.ShellContainer, error) {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	sel := labels.SelectorFromSet(labels.Set{LabelApp: s.cfg.AppName, LabelKind: kind}).String()
	list, err := s.api.pods(s.cfg.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
	if err != nil {
		return nil, unavailable("list "+kind+" pods", err)
	}
	out := make([]service.ShellContainer, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, sessionContainer(&list.Items[i], idAnnotation))
	}
	lost, err := s.lostNodes(ctx)
	if err != nil {
		return nil, err
	}
	markLost(list.Items, out, lost)
	return out, nil
}

// sessionContainer describes a session pod in Docker's terms: its phase as
// a container state, its end as FinishedAt; ShellID is the session's ID.
func sessionContainer(p *corev1.Pod, idAnnotation string) service.ShellContainer {
	sc := service.ShellContainer{
		ContainerID: p.Name, Name: cmp.Or(p.Annotations[AnnotationName], p.Name),
		ShellID: p.Annotations[idAnnotation], WorkspaceID: p.Labels[LabelWorkspace],
		Instance: p.Annotations[AnnotationInstance], TokenName: p.Annotations[AnnotationToken],
		State: podState(p), Created: p.CreationTimestamp.Time,
	}
	if secs, err := strconv.ParseInt(p.Annotations[AnnotationExpires], 10, 64); err == nil {
		sc.Expires = time.Unix(secs, 0)
	}
	if t := terminated(p); t != nil {
		sc.FinishedAt = t.FinishedAt.Time
	}
	return sc
}

func podState(p *corev1.Pod) string {
	switch {
	case p.DeletionTimestamp != nil:
		return "removing"
	case terminated(p) != nil, p.Status.Phase == corev1.PodSucceeded, p.Status.Phase == corev1.PodFailed:
		return "exited"
	case p.Status.Phase == corev1.PodRunning:
		return "running"
	default:
		return "created"
	}
}

// RemoveContainer deletes a shell pod at once; an absent one is no error.
func (s *Shells) RemoveContainer(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	id, err := objectName(id)
	if err != nil {
		return err
	}
	if err := s.removePod(ctx, id, 0); err != nil {
		return unavailable("delete a shell pod", err)
	}
	return nil
}
