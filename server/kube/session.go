package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"
)

// A shell or exec pod holds the workspace while an idle process keeps it
// running (holdArgv); the session itself is a command run in it through
// the exec subresource. The kubelet logs a container's own output, a
// terminal's echo and keystrokes included, but never an exec's: that is
// why the shell is no attach to the pod's main process. An exec also
// starts its command once its streams are open, so no output is lost.

// holdArgv keeps a shell or exec pod up until it is deleted; the image
// needs /bin/sh and sleep, as the busybox shell image has.
var holdArgv = []string{"/bin/sh", "-c", "exec sleep 2147483647"}

// session is one command run in a pod, and the pod's life: the exec, its
// exit status, the stop and the one teardown. Its owner adds the streams.
type session struct {
	s         *Shells
	name      string
	container string

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{} // closed by close
	ended     chan struct{} // closed when the exec ended; err then holds how
	err       error
	stopping  atomic.Bool // stop or close asked the pod to end
	started   atomic.Bool // run was called

	mu     sync.Mutex
	cancel context.CancelFunc // ends the exec's streams
}

func newSession(s *Shells, name, container string) *session {
	return &session{s: s, name: name, container: container, closed: make(chan struct{}),
		ended: make(chan struct{}), cancel: func() {}}
}

// run starts argv in the pod's container in the background; done sees
// the streams' end (nil when the command exited, whatever its status).
func (se *session) run(ctx context.Context, opts corev1.PodExecOptions, streams remotecommand.StreamOptions, done func(error)) error {
	if !se.started.CompareAndSwap(false, true) {
		return errors.New("the session is started already")
	}
	opts.Container = se.container
	exec, err := se.s.execExecutor(se.name, &opts)
	if err != nil {
		return fmt.Errorf("exec in the pod: %w", err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	se.mu.Lock()
	if isClosed(se.closed) {
		se.mu.Unlock()
		cancel()
		return errShellClosed
	}
	se.cancel = cancel
	se.mu.Unlock()
	go se.endWithPod(actx, cancel)
	go func() {
		err := exec.StreamWithContext(actx, streams)
		se.err = err
		close(se.ended)
		var exit utilexec.ExitError
		if errors.As(err, &exit) || isClosed(se.closed) {
			err = nil
		}
		done(err)
	}()
	return nil
}

// oneShot runs argv in the pod's container beside the session's command
// and waits for it; its output is dropped.
func (se *session) oneShot(ctx context.Context, argv []string) error {
	exec, err := se.s.execExecutor(se.name, &corev1.PodExecOptions{Container: se.container, Command: argv,
		Stdout: true, Stderr: true})
	if err != nil {
		return fmt.Errorf("exec in the pod: %w", err)
	}
	return exec.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: io.Discard, Stderr: io.Discard})
}

// streamGrace is how long the exec's streams may take, after the pod's
// container ended or the pod went, to end by themselves and deliver the
// command's status.
const streamGrace = 2 * time.Second

// endWithPod ends the exec's streams once the pod's container ended or the
// pod went: an exec whose container dies is not always ended by the
// runtime, and would hold the session open.
func (se *session) endWithPod(ctx context.Context, cancel context.CancelFunc) {
	_, err := se.s.waitPod(ctx, se.name, func(p *corev1.Pod) (bool, error) { return terminated(p) != nil, nil })
	if ctx.Err() != nil || (err != nil && !errors.Is(err, errPodGone)) {
		return
	}
	t := time.NewTimer(streamGrace)
	defer t.Stop()
	select {
	case <-se.ended:
	case <-t.C:
		cancel()
	}
}

// exit is how a session's command ended.
type exit struct {
	code         int
	oom, removed bool
}

// wait reports how the command ended: its status from the exec, or, when
// the streams broke, the pod's fate: deleted by someone else is removed,
// by cairn's own stop killed.
func (se *session) wait(ctx context.Context) (exit, error) {
	select {
	case <-se.ended:
	case <-ctx.Done():
		return exit{}, ctx.Err()
	}
	var status utilexec.ExitError
	switch {
	case se.err == nil:
		return exit{}, nil
	case errors.As(se.err, &status):
		return exit{code: status.ExitStatus(), oom: se.oomKilled(ctx)}, nil
	}
	gone := se.gone(ctx)
	switch {
	case se.stopping.Load():
		return exit{code: 137}, nil
	case gone:
		return exit{code: 137, removed: true}, nil
	}
	return exit{}, fmt.Errorf("the session's streams failed: %w", se.err)
}

// oomKilled reports whether the pod's container was OOM-killed: the
// kernel may pick the hold process as well as the command.
func (se *session) oomKilled(ctx context.Context) bool {
	pod, err := se.s.api.pods(se.s.cfg.Namespace).Get(ctx, se.name, getOpts)
	if err != nil {
		return false
	}
	t := terminated(pod)
	return t != nil && t.Reason == "OOMKilled"
}

// gone reports whether the pod is deleted or being deleted.
func (se *session) gone(ctx context.Context) bool {
	pod, err := se.s.api.pods(se.s.cfg.Namespace).Get(ctx, se.name, getOpts)
	return apierrors.IsNotFound(err) || (err == nil && pod.DeletionTimestamp != nil)
}

// stop deletes the pod with the stop grace and waits until the command
// ended.
func (se *session) stop(ctx context.Context) error {
	se.stopping.Store(true)
	if err := se.s.removePod(ctx, se.name, int64(se.s.opts.StopSecs)); err != nil {
		return fmt.Errorf("stop the pod: %w", err)
	}
	if !se.started.Load() {
		return nil
	}
	select {
	case <-se.ended:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close is the one teardown, run once on a deadline of its own (stopSecs
// + 10 s), so no cancelled request can skip it: it ends the streams
// (cairn's and the owner's), deletes the pod with the stop grace (none
// once the command has ended) and waits until the pod is gone, so its volume is free when close returns.
// A failure is returned for the log; the reapers take what is left.
func (se *session) close(streams func()) error {
	se.closeOnce.Do(func() {
		se.stopping.Store(true)
		se.mu.Lock()
		close(se.closed)
		cancel := se.cancel
		se.mu.Unlock()
		cancel()
		streams()
		ctx, done := context.WithTimeout(context.Background(), time.Duration(se.s.opts.StopSecs)*time.Second+10*time.Second)
		defer done()
		grace := int64(se.s.opts.StopSecs)
		if isClosed(se.ended) {
			grace = 0 // the command is over; the hold process has nothing to stop and ignores SIGTERM
		}
		if err := se.s.removePod(ctx, se.name, grace); err != nil {
			se.closeErr = fmt.Errorf("delete the pod %s: %w", se.name, err)
			return
		}
		_, err := se.s.waitPod(ctx, se.name, func(*corev1.Pod) (bool, error) { return false, nil })
		if !errors.Is(err, errPodGone) {
			se.closeErr = fmt.Errorf("wait for the pod %s to go: %w", se.name, err)
		}
	})
	return se.closeErr
}
