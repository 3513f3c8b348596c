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
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/cairn-dev/cairn/ptyshell"
)

// shellStream is one shell pod's terminal and life: ptyshell.Stream over
// an attach (PTYSHELL.md §7.3–§7.5).
type shellStream struct {
	s    *Shells
	name string

	stdinR *io.PipeReader
	stdinW *io.PipeWriter
	outR   *io.PipeReader
	outW   *io.PipeWriter
	sizes  *sizeQueue

	startOnce sync.Once
	closeOnce sync.Once
	closeErr  error
	closed    chan struct{} // closed by Close
	attached  chan struct{} // closed when the attach ended
	stopping  atomic.Bool   // Stop or Close asked the pod to end

	mu     sync.Mutex
	cancel context.CancelFunc // ends the attach
}

var _ ptyshell.Stream = (*shellStream)(nil)

func newShellStream(s *Shells, name string) *shellStream {
	st := &shellStream{s: s, name: name, closed: make(chan struct{}), attached: make(chan struct{}),
		cancel: func() {}}
	st.stdinR, st.stdinW = io.Pipe()
	st.outR, st.outW = io.Pipe()
	st.sizes = newSizeQueue(st.closed, st.attached)
	return st
}

// Start attaches to the running pod's terminal and opens the gate with
// the first input byte, so output from the shell's first instant is on
// the attach. The attach runs until the shell exits or Close; its failure
// ends Read with that error.
func (st *shellStream) Start(ctx context.Context) error {
	exec, err := st.executor()
	if err != nil {
		return fmt.Errorf("attach to the shell pod: %w", err)
	}
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	st.mu.Lock()
	if st.isClosed() {
		st.mu.Unlock()
		cancel()
		return errShellClosed
	}
	st.cancel = cancel
	st.mu.Unlock()
	st.startOnce.Do(func() {
		go st.attach(actx, exec)
	})
	return nil
}

func (st *shellStream) attach(ctx context.Context, exec remotecommand.Executor) {
	defer close(st.attached)
	err := exec.StreamWithContext(ctx, remotecommand.StreamOptions{
		Stdin:             io.MultiReader(strings.NewReader("\n"), st.stdinR),
		Stdout:            st.outW,
		Tty:               true,
		TerminalSizeQueue: st.sizes,
	})
	if err == nil || st.isClosed() {
		err = io.EOF
	}
	st.outW.CloseWithError(err)
	st.stdinR.CloseWithError(errShellClosed)
}

// executor prefers the websocket protocol and falls back to SPDY where
// the API server refuses the upgrade.
func (st *shellStream) executor() (remotecommand.Executor, error) {
	u := st.s.cs.CoreV1().RESTClient().Post().Namespace(st.s.cfg.Namespace).Resource("pods").Name(st.name).
		SubResource("attach").VersionedParams(&corev1.PodAttachOptions{
		Container: KindShell, Stdin: true, Stdout: true, TTY: true,
	}, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(st.s.rc, "GET", u.String())
	if err != nil {
		return nil, err
	}
	spdy, err := remotecommand.NewSPDYExecutor(st.s.rc, "POST", u)
	if err != nil {
		return nil, err
	}
	return remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
}

func (st *shellStream) isClosed() bool {
	select {
	case <-st.closed:
		return true
	default:
		return false
	}
}

// Read reads the terminal's raw output; io.EOF once the attach ended.
func (st *shellStream) Read(p []byte) (int, error) { return st.outR.Read(p) }

// Write writes p to the terminal's input; it fails once the attach ended.
func (st *shellStream) Write(p []byte) (int, error) { return st.stdinW.Write(p) }

// Resize queues the terminal's size for the attach; only the latest
// pending size is kept.
func (st *shellStream) Resize(_ context.Context, size ptyshell.Size) error {
	if st.isClosed() {
		return errShellClosed
	}
	st.sizes.push(remotecommand.TerminalSize{Width: uint16(size.Cols), Height: uint16(size.Rows)})
	return nil
}

// Wait reports how the shell's container ended, from the pod's status. A
// pod deleted by someone else is Removed.
func (st *shellStream) Wait(ctx context.Context) (ptyshell.ExitStatus, error) {
	pod, err := st.s.waitPod(ctx, st.name, func(p *corev1.Pod) (bool, error) { return terminated(p) != nil, nil })
	if err != nil && !errors.Is(err, errPodGone) {
		return ptyshell.ExitStatus{}, fmt.Errorf("wait for the shell pod: %w", err)
	}
	var t *corev1.ContainerStateTerminated
	if pod != nil {
		t = terminated(pod)
	}
	if t == nil {
		return ptyshell.ExitStatus{Code: ptyshell.ExitCodeKilled, Removed: true}, nil
	}
	removed := errors.Is(err, errPodGone) && !st.stopping.Load()
	return ptyshell.ExitStatus{Code: int(t.ExitCode), OOMKilled: t.Reason == "OOMKilled", Removed: removed}, nil
}

// Stop deletes the pod with the stop grace (SIGHUP by the preStop hook,
// then SIGTERM, then SIGKILL) and waits until its container ended.
func (st *shellStream) Stop(ctx context.Context) error {
	st.stopping.Store(true)
	if err := st.s.removePod(ctx, st.name, int64(st.s.opts.StopSecs)); err != nil {
		return fmt.Errorf("stop the shell pod: %w", err)
	}
	_, err := st.s.waitPod(ctx, st.name, func(p *corev1.Pod) (bool, error) { return terminated(p) != nil, nil })
	if err != nil && !errors.Is(err, errPodGone) {
		return fmt.Errorf("stop the shell pod: %w", err)
	}
	return nil
}

// Close is the one teardown (§7.5), on its own deadline of stopSecs +
// 10 s: it ends the attach, deletes the pod with the stop grace and waits
// until the pod is gone, so its volume is free when Close returns.
func (st *shellStream) Close() error {
	st.closeOnce.Do(func() {
		st.stopping.Store(true)
		st.mu.Lock()
		close(st.closed)
		cancel := st.cancel
		st.mu.Unlock()
		cancel()
		st.stdinW.CloseWithError(errShellClosed)
		st.outR.CloseWithError(io.EOF)
		ctx, done := context.WithTimeout(context.Background(), time.Duration(st.s.opts.StopSecs)*time.Second+10*time.Second)
		defer done()
		if err := st.s.removePod(ctx, st.name, int64(st.s.opts.StopSecs)); err != nil {
			st.closeErr = fmt.Errorf("delete the shell pod %s: %w", st.name, err)
			return
		}
		_, err := st.s.waitPod(ctx, st.name, func(*corev1.Pod) (bool, error) { return false, nil })
		if !errors.Is(err, errPodGone) {
			st.closeErr = fmt.Errorf("wait for the shell pod %s to go: %w", st.name, err)
		}
	})
	return st.closeErr
}

// errShellClosed is what calls return once Close came first.
var errShellClosed = errors.New("shell closed")

// sizeQueue is the attach's remotecommand.TerminalSizeQueue: at most one
// pending size, the latest.
type sizeQueue struct {
	next          chan remotecommand.TerminalSize
	closed, ended <-chan struct{}
}

func newSizeQueue(closed, ended <-chan struct{}) *sizeQueue {
	return &sizeQueue{next: make(chan remotecommand.TerminalSize, 1), closed: closed, ended: ended}
}

func (q *sizeQueue) push(size remotecommand.TerminalSize) {
	for {
		select {
		case q.next <- size:
			return
		default:
			select {
			case <-q.next: // drop the stale one
			default:
			}
		}
	}
}

// Next blocks for the next size; nil, once the stream is closed or the
// attach ended, ends the attach's resize loop.
func (q *sizeQueue) Next() *remotecommand.TerminalSize {
	select {
	case s := <-q.next:
		return &s
	case <-q.closed:
		return nil
	case <-q.ended:
		return nil
	}
}
