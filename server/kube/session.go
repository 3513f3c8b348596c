package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"
)

// session is the life of one attached pod, a shell's or an exec's: the
// attach, the wait for its container's end, the stop and the one
// teardown. Its owner adds the streams.
type session struct {
	s    *Shells
	name string
	// container is the attached container's name, opts what is attached.
	container string

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{} // closed by close
	attached  chan struct{} // closed when the attach ended
	stopping  atomic.Bool   // stop or close asked the pod to end
	started   atomic.Bool   // attach was called

	mu     sync.Mutex
	cancel context.CancelFunc // ends the attach
}

func newSession(s *Shells, name, container string) *session {
	return &session{s: s, name: name, container: container, closed: make(chan struct{}),
		attached: make(chan struct{}), cancel: func() {}}
}

func (se *session) isClosed() bool {
	select {
	case <-se.closed:
		return true
	default:
		return false
	}
}

// attach runs the attach in the background until the container's streams
// end or close; done sees its error (nil when it ended cleanly or was
// closed). Stdin's first byte opens the pod's gate (see gate).
func (se *session) attach(ctx context.Context, opts corev1.PodAttachOptions, streams remotecommand.StreamOptions, done func(error)) error {
	if !se.started.CompareAndSwap(false, true) {
		return errors.New("the pod is attached already")
	}
	opts.Container = se.container
	exec, err := se.s.attachExecutor(se.name, &opts)
	if err != nil {
		return fmt.Errorf("attach to the pod: %w", err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	se.mu.Lock()
	if se.isClosed() {
		se.mu.Unlock()
		cancel()
		return errShellClosed
	}
	se.cancel = cancel
	se.mu.Unlock()
	streams.Stdin = io.MultiReader(strings.NewReader("\n"), streams.Stdin)
	go func() {
		defer close(se.attached)
		err := exec.StreamWithContext(actx, streams)
		if se.isClosed() {
			err = nil
		}
		done(err)
	}()
	return nil
}

// exit is how a pod's container ended.
type exit struct {
	code         int
	oom, removed bool
}

// wait reports how the container ended, from the pod's status. A pod
// deleted by someone else is removed; one deleted before its status said
// anything counts as killed.
func (se *session) wait(ctx context.Context) (exit, error) {
	pod, err := se.s.waitPod(ctx, se.name, func(p *corev1.Pod) (bool, error) { return terminated(p) != nil, nil })
	if err != nil && !errors.Is(err, errPodGone) {
		return exit{}, fmt.Errorf("wait for the pod: %w", err)
	}
	var t *corev1.ContainerStateTerminated
	if pod != nil {
		t = terminated(pod)
	}
	if t == nil {
		return exit{code: 137, removed: true}, nil
	}
	removed := errors.Is(err, errPodGone) && !se.stopping.Load()
	return exit{code: int(t.ExitCode), oom: t.Reason == "OOMKilled", removed: removed}, nil
}

// stop deletes the pod with the stop grace and waits until its container
// ended or the pod went.
func (se *session) stop(ctx context.Context) error {
	se.stopping.Store(true)
	if err := se.s.removePod(ctx, se.name, int64(se.s.opts.StopSecs)); err != nil {
		return fmt.Errorf("stop the pod: %w", err)
	}
	_, err := se.s.waitPod(ctx, se.name, func(p *corev1.Pod) (bool, error) { return terminated(p) != nil, nil })
	if err != nil && !errors.Is(err, errPodGone) {
		return fmt.Errorf("stop the pod: %w", err)
	}
	return nil
}

// close is the one teardown, run once on a deadline of its own (stopSecs
// + 10 s), so no cancelled request can skip it: it ends the attach and
// the owner's streams (streams), deletes the pod with the stop grace and
// waits until the pod is gone, so its volume is free when close returns.
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
		if err := se.s.removePod(ctx, se.name, int64(se.s.opts.StopSecs)); err != nil {
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
