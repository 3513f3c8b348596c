package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Browse pods, Kubernetes' browse containers. A workspace being
// browsed has one warm pod of the sidecar image mounting its claim
// read-only; each request is an exec of `serve` in it with the request
// line on stdin, answered on stdout, the process ending at stdin's end. An
// attach to one long-lived `serve` would be Docker's stream, but the
// kubelet logs a container's own output — every byte read would land in
// the node's log files — and never an exec's. The pod's own `serve` only
// holds it up: its stdin is never written, so its idle timer never resets
// and is set to the pod's lifetime (the sidecar timeout) — it exits for a
// server that stopped looking. Pods idle past BrowseIdle are deleted on
// the next request; at most MaxBrowsers exist (the least recently used
// goes); at most browseExecs requests run in one pod at once.

const (
	browseRole = "browse"
	writerRole = "writer" // a browse pod that mounts the claim read-write
	// maxBrowseStderr keeps enough of a failing serve's stderr to log.
	maxBrowseStderr = 4 << 10
	// browseExecs bounds the requests of one workspace at once: each is a
	// serve process in the pod's memory limit.
	browseExecs = 4
)

// errBrowseProtocol: the sidecar answered out of protocol.
var errBrowseProtocol = errors.New("the browse sidecar answered out of protocol")

// browsePods is the runtime's warm browse pods, by workspace.
type browsePods struct {
	mu     sync.Mutex
	byWS   map[string]*browsePod
	closed bool
}

type browsePod struct {
	name, volume string
	ready        chan struct{} // closed once started (or failed: err)
	execs        chan struct{} // a token per request running in it
	err          error
	started      time.Time
	lastUsed     time.Time
}

// Browse answers one request in the workspace's browse pod, started on
// first use, within BrowseTimeout and ctx. A pod that ended (idle, swept,
// deleted) is replaced and the request sent again, once: a browse request
// only reads. A reply with OK false is the sidecar's refusal, not an
// error. Reasons: docker_unavailable, sidecar_timeout, sidecar_failed,
// server_shutting_down.
func (r *Runtime) Browse(ctx context.Context, t service.BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.BrowseTimeout)
	defer cancel()
	line, err := json.Marshal(req)
	if err != nil {
		return nil, cairn.Internal("encode a browse request", err)
	}
	for attempt := 1; ; attempt++ {
		p, err := r.browsePod(ctx, t)
		if err != nil {
			return nil, r.browseError(err)
		}
		reply, err := r.browseIn(ctx, p, append(line, '\n'), req)
		if err == nil {
			return reply, nil
		}
		r.dropBrowser(t.Key(), p)
		if attempt == 1 && ctx.Err() == nil && !errors.Is(err, errBrowseProtocol) && !sidecar.Writes(req.Op) {
			r.log.Info("browse pod did not answer; asking a fresh one", "workspace_id", t.WorkspaceID, "err", err)
			continue
		}
		return nil, r.browseError(err)
	}
}

// browsePod returns the workspace's started browse pod, starting one (and
// making room) when there is none.
func (r *Runtime) browsePod(ctx context.Context, t service.BrowseTarget) (*browsePod, error) {
	bs := r.browse
	now := r.now()
	bs.mu.Lock()
	if bs.closed {
		bs.mu.Unlock()
		return nil, cairn.Errorf(cairn.ReasonServerShuttingDown, "the server is shutting down")
	}
	r.retireIdle(now)
	key := t.Key()
	p := bs.byWS[key]
	if p != nil && (p.volume != t.VolumeName || (!p.started.IsZero() && r.browseExpired(p, now))) {
		r.retire(key, p)
		p = nil
	}
	fresh := p == nil
	if fresh {
		if len(bs.byWS) >= r.cfg.MaxBrowsers {
			r.retireOldest()
		}
		p = &browsePod{volume: t.VolumeName, ready: make(chan struct{}), execs: make(chan struct{}, browseExecs)}
		bs.byWS[key] = p
	}
	p.lastUsed = now
	bs.mu.Unlock()
	if fresh {
		p.name, p.err = r.startBrowsePod(ctx, t)
		bs.mu.Lock()
		p.started = r.now()
		if p.err != nil && bs.byWS[key] == p {
			delete(bs.byWS, key)
		}
		bs.mu.Unlock()
		close(p.ready)
	}
	select {
	case <-p.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return p, p.err
}

// browseExpired: a request is never begun closer to the pod's own end
// (the sidecar timeout) than one request's timeout. The caller holds mu.
func (r *Runtime) browseExpired(p *browsePod, now time.Time) bool {
	return now.Sub(p.started) >= r.cfg.Timeout-min(r.cfg.BrowseTimeout, r.cfg.Timeout/2)
}

// retireIdle deletes the pods idle past BrowseIdle. The caller holds mu.
func (r *Runtime) retireIdle(now time.Time) {
	for ws, p := range r.browse.byWS {
		if now.Sub(p.lastUsed) >= r.cfg.BrowseIdle && isClosed(p.ready) {
			r.retire(ws, p)
		}
	}
}

// retireOldest makes room: the least recently used pod goes. A request
// still running in it fails and is sent again to a fresh pod.
func (r *Runtime) retireOldest() {
	var oldest string
	for ws, p := range r.browse.byWS {
		if oldest == "" || p.lastUsed.Before(r.browse.byWS[oldest].lastUsed) {
			oldest = ws
		}
	}
	r.retire(oldest, r.browse.byWS[oldest])
}

// retire takes p out of use and deletes its pod in the background. The
// caller holds mu.
func (r *Runtime) retire(ws string, p *browsePod) {
	delete(r.browse.byWS, ws)
	go func() {
		<-p.ready
		if p.name != "" {
			r.deletePod(context.Background(), p.name, 0)
		}
	}()
}

// dropBrowser takes p out of use and deletes its pod before the request
// returns, so that nothing a failed request ran is left behind.
func (r *Runtime) dropBrowser(ws string, p *browsePod) {
	r.browse.mu.Lock()
	if r.browse.byWS[ws] == p {
		delete(r.browse.byWS, ws)
	}
	r.browse.mu.Unlock()
	if p.name != "" {
		r.deletePod(context.Background(), p.name, 0)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// startBrowsePod creates the workspace's browse pod and waits until it
// runs. Reasons: docker_unavailable, sidecar_busy.
func (r *Runtime) startBrowsePod(ctx context.Context, t service.BrowseTarget) (string, error) {
	pod, err := r.browsePodSpec(t)
	if err != nil {
		return "", err
	}
	return r.startServePod(ctx, pod, "the browse pod")
}

// startServePod creates a pod whose serve holds it up (a browse pod, a
// watcher pod) and waits until it runs. Reasons: docker_unavailable,
// sidecar_busy, container_start_timeout.
func (r *Runtime) startServePod(ctx context.Context, pod *corev1.Pod, what string) (string, error) {
	release, err := service.TakeSidecarSlot(ctx, r.slots)
	if err != nil {
		return "", err
	}
	defer release()
	made, err := r.createPod(ctx, pod, what)
	if err != nil {
		return "", err
	}
	if err := r.awaitStart(ctx, made.Name, what, started); err != nil {
		r.deletePod(context.Background(), made.Name, 0)
		if cairn.ErrorReason(err) == cairn.ReasonContainerStartTimeout {
			return "", err
		}
		return "", unavailable("start "+what, err)
	}
	return made.Name, nil
}

// browsePodSpec is the reader's posture: the claim mounted read-only, root
// with only DAC_READ_SEARCH (it reads and lists every user's files and
// nothing more), on the pod network with nothing to dial. A writer mounts
// it read-write with the write command's capabilities.
func (r *Runtime) browsePodSpec(t service.BrowseTarget) (*corev1.Pod, error) {
	if !t.Writable {
		return r.servePodSpec(t, browseRole, readerCaps, nil)
	}
	return r.servePodSpec(t, writerRole, sidecar.Capabilities(sidecar.CommandWrite), []corev1.EnvVar{
		{Name: sidecar.EnvWritable, Value: "1"},
		{Name: sidecar.EnvMaxWriteBytes, Value: strconv.Itoa(sidecar.MaxWriteBytes)}})
}

// readerCaps are the reader's: it reads and lists every user's files.
var readerCaps = []string{"DAC_READ_SEARCH"}

// servePodSpec is a pod of the sidecar image held up by its own serve,
// whose work comes as execs into its one container (named browseRole).
// Role sidecar: the maintainer's sweep of sidecars older than the timeout
// covers a leftover, and the pod's deadline ends it even without one;
// isBrowser keeps it out of the mount count.
func (r *Runtime) servePodSpec(t service.BrowseTarget, role string, caps []string, env []corev1.EnvVar) (*corev1.Pod, error) {
	claim, err := objectName(t.VolumeName)
	if err != nil {
		return nil, err
	}
	name, err := objectName(fmt.Sprintf("%s.%s.%s.%s", r.cfg.AppName, role, t.WorkspaceID, ulid.Make()))
	if err != nil {
		return nil, err
	}
	meta := r.meta(name, map[string]string{
		LabelRole: "sidecar", LabelSidecar: "true", LabelCommand: sidecar.CommandServe, LabelWorkspace: t.WorkspaceID,
	}, map[string]string{})
	pod := r.podBase(meta, claim, 0)
	pod.Spec.Volumes = []corev1.Volume{workspaceVolume(claim, !t.Writable)}
	deadline := int64(r.cfg.Timeout/time.Second) + sidecarGrace
	pod.Spec.ActiveDeadlineSeconds = &deadline
	pod.Spec.Containers = []corev1.Container{{
		Name:            browseRole,
		Image:           r.cfg.Image,
		ImagePullPolicy: r.cfg.ImagePullPolicy,
		Command:         []string{"/cairn-sidecar"},
		Args:            []string{sidecar.CommandServe},
		Env: append([]corev1.EnvVar{
			{Name: sidecar.EnvIdleSecs, Value: seconds(r.cfg.Timeout)},
			{Name: sidecar.EnvLifetimeSecs, Value: seconds(r.cfg.Timeout)},
			{Name: sidecar.EnvMountRoot, Value: cairn.MountPath},
		}, env...),
		WorkingDir:      "/",
		VolumeMounts:    []corev1.VolumeMount{workspaceMount(!t.Writable)},
		SecurityContext: hardened(0, 0, caps),
		Resources: corev1.ResourceRequirements{
			Limits:   corev1.ResourceList{corev1.ResourceMemory: sidecarMemory},
			Requests: corev1.ResourceList{corev1.ResourceMemory: sidecarMemoryRequest, corev1.ResourceCPU: sidecarCPURequest},
		},
		// Held open and never written: the pod's own serve waits on it.
		Stdin: true,
	}}
	return pod, nil
}

// seconds renders d in whole seconds, rounded up, at least 1.
func seconds(d time.Duration) string {
	return strconv.FormatInt(max(1, int64((d+time.Second-1)/time.Second)), 10)
}

// browseIn runs the request in p once one of its exec tokens is free.
func (r *Runtime) browseIn(ctx context.Context, p *browsePod, line []byte, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	select {
	case p.execs <- struct{}{}:
		defer func() { <-p.execs }()
	case <-ctx.Done():
		return nil, &cairn.Error{Reason: cairn.ReasonSidecarBusy, Err: ctx.Err(),
			Detail: "the workspace's browse pod stayed busy until the request deadline; try again later"}
	}
	return r.browseExec(ctx, p.name, line, req)
}

// browseExec runs one serve in the pod: the request line, then end of
// file; the reply line and, for a read, exactly Length bytes after it.
func (r *Runtime) browseExec(ctx context.Context, pod string, line []byte, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	exec, err := r.execExecutor(pod, &corev1.PodExecOptions{Container: browseRole,
		Command: []string{"/cairn-sidecar", sidecar.CommandServe}, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, err
	}
	stdout := &capped{max: sidecar.MaxReplyLine + 1 + sidecar.MaxReadBytes}
	stderr := &capped{max: maxBrowseStderr, quiet: true}
	stdin := io.MultiReader(bytes.NewReader(line), bytes.NewReader(req.Body))
	err = exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: stdout, Stderr: stderr})
	if err != nil {
		if stderr.Len() > 0 {
			r.log.Debug("browse exec stderr", "pod", pod, "stderr", stderr.String())
		}
		return nil, err
	}
	return parseBrowseReply(stdout.Bytes(), req)
}

// parseBrowseReply checks a serve's whole output against the request.
func parseBrowseReply(out []byte, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	raw, data, ok := bytes.Cut(out, []byte{'\n'})
	switch {
	case !ok:
		return nil, fmt.Errorf("%w: no reply line", errBrowseProtocol)
	case len(raw) > sidecar.MaxReplyLine:
		return nil, fmt.Errorf("%w: a reply line over %d bytes", errBrowseProtocol, sidecar.MaxReplyLine)
	}
	var reply sidecar.BrowseReply
	if err := json.Unmarshal(raw, &reply); err != nil {
		return nil, fmt.Errorf("%w: decode the reply: %v", errBrowseProtocol, err)
	}
	if reply.Length < 0 || reply.Length > sidecar.MaxReadBytes ||
		(req.Op == sidecar.OpRead && req.Length > 0 && reply.Length > req.Length) || int64(len(data)) != reply.Length {
		return nil, fmt.Errorf("%w: a reply of %d bytes with %d after it", errBrowseProtocol, reply.Length, len(data))
	}
	if reply.Length > 0 {
		reply.Data = data
	}
	return &reply, nil
}

// capped is a buffer that refuses to grow past max: a serve that writes
// more is out of protocol, and the exec ends with the write's error. A
// quiet one drops the excess instead.
type capped struct {
	bytes.Buffer
	max   int
	quiet bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		if !c.quiet {
			return 0, fmt.Errorf("%w: more than %d bytes of output", errBrowseProtocol, c.max)
		}
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// StopBrowse deletes the workspace's browse pods and watchers, if any, and
// returns once they are gone, so that a teardown finds the claim free. Reasons:
// docker_unavailable.
func (r *Runtime) StopBrowse(ctx context.Context, workspaceID string) error {
	r.watches.Stop(workspaceID)
	return r.stopBrowsers(ctx, service.BrowseKeys(workspaceID)...)
}

// StopWriter deletes the workspace's writer pod, if it has one.
func (r *Runtime) StopWriter(ctx context.Context, workspaceID string) error {
	return r.stopBrowsers(ctx, service.BrowseTarget{WorkspaceID: workspaceID, Writable: true}.Key())
}

// stopBrowsers deletes the browse pods of keys.
func (r *Runtime) stopBrowsers(ctx context.Context, keys ...string) error {
	r.browse.mu.Lock()
	var pods []*browsePod
	for _, key := range keys {
		if p := r.browse.byWS[key]; p != nil {
			pods = append(pods, p)
			delete(r.browse.byWS, key)
		}
	}
	r.browse.mu.Unlock()
	return r.removeBrowsers(ctx, pods...)
}

// CloseBrowsers deletes every browse pod and watcher; Browse then answers
// server_shutting_down. Called once, at shutdown.
func (r *Runtime) CloseBrowsers(ctx context.Context) error {
	r.watches.Stop("")
	r.browse.mu.Lock()
	r.browse.closed = true
	all := make([]*browsePod, 0, len(r.browse.byWS))
	for ws, p := range r.browse.byWS {
		all = append(all, p)
		delete(r.browse.byWS, ws)
	}
	r.browse.mu.Unlock()
	return r.removeBrowsers(ctx, all...)
}

func (r *Runtime) removeBrowsers(ctx context.Context, pods ...*browsePod) error {
	var errs []error
	for _, p := range pods {
		if p == nil {
			continue
		}
		select {
		case <-p.ready:
		case <-ctx.Done():
			return unavailable("stop a browse pod", ctx.Err())
		}
		if p.name != "" {
			errs = append(errs, r.removePodAndWait(ctx, p.name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return unavailable("stop the browse pods", err)
	}
	return nil
}

// removePodAndWait deletes a pod and returns once it is gone.
func (r *Runtime) removePodAndWait(ctx context.Context, name string) error {
	if err := r.removePod(ctx, name, 0); err != nil {
		return err
	}
	never := func(*corev1.Pod) (bool, error) { return false, nil }
	if _, err := r.waitPod(ctx, name, never); !errors.Is(err, errPodGone) {
		return err
	}
	return nil
}

// browseError maps a failure to its reason, as on Docker.
func (r *Runtime) browseError(err error) error {
	if _, ok := errors.AsType[*cairn.Error](err); ok {
		return err
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &cairn.Error{Reason: cairn.ReasonSidecarTimeout, Err: err,
			Detail: fmt.Sprintf("the browse sidecar did not answer in time (at most %s)", r.cfg.BrowseTimeout)}
	case errors.Is(err, context.Canceled):
		return &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Err: err,
			Detail: "the request ended before the browse sidecar answered"}
	case errors.Is(err, errBrowseProtocol):
		return &cairn.Error{Reason: cairn.ReasonSidecarFailed, Err: err,
			Detail: "the browse sidecar answered out of protocol; its pod was deleted"}
	default:
		return unavailable("run a browse request in its pod", err)
	}
}
