package kube

import (
	"context"
	"errors"
	"io"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/cairn-dev/cairn/ptyshell"
)

// shellStream is one shell pod's terminal and life: ptyshell.Stream over
// an attach.
type shellStream struct {
	*session
	argv   []string
	stdinR *io.PipeReader
	stdinW *io.PipeWriter
	outR   *io.PipeReader
	outW   *io.PipeWriter
	sizes  *sizeQueue
}

var _ ptyshell.Stream = (*shellStream)(nil)

func newShellStream(s *Shells, name string) *shellStream {
	st := &shellStream{session: newSession(s, name, KindShell), argv: s.shellArgv()}
	st.stdinR, st.stdinW = io.Pipe()
	st.outR, st.outW = io.Pipe()
	st.sizes = newSizeQueue(st.closed, st.ended)
	return st
}

// Start runs the shell in the pod on a terminal of the exec's; the exec
// opens its streams first, so output from the shell's first instant is
// on them. It runs until the shell exits or Close; a failure of the
// streams ends Read with that error.
func (st *shellStream) Start(ctx context.Context) error {
	return st.run(ctx, corev1.PodExecOptions{Command: st.argv, Stdin: true, Stdout: true, TTY: true},
		remotecommand.StreamOptions{Stdin: st.stdinR, Stdout: st.outW, Tty: true, TerminalSizeQueue: st.sizes},
		func(err error) {
			if err == nil {
				err = io.EOF
			}
			st.outW.CloseWithError(err)
			st.stdinR.CloseWithError(errShellClosed)
		})
}

// Read reads the terminal's raw output; io.EOF once the shell ended.
func (st *shellStream) Read(p []byte) (int, error) { return st.outR.Read(p) }

// Write writes p to the terminal's input; it fails once the shell ended.
func (st *shellStream) Write(p []byte) (int, error) { return st.stdinW.Write(p) }

// Resize queues the terminal's size for the exec; only the latest
// pending size is kept.
func (st *shellStream) Resize(_ context.Context, size ptyshell.Size) error {
	if isClosed(st.closed) {
		return errShellClosed
	}
	st.sizes.push(remotecommand.TerminalSize{Width: uint16(size.Cols), Height: uint16(size.Rows)})
	return nil
}

// Wait reports how the shell's container ended.
func (st *shellStream) Wait(ctx context.Context) (ptyshell.ExitStatus, error) {
	e, err := st.wait(ctx)
	return ptyshell.ExitStatus{Code: e.code, OOMKilled: e.oom, Removed: e.removed}, err
}

// Stop deletes the pod with the stop grace (SIGHUP to every process by
// the preStop hook, then SIGTERM, then SIGKILL) and waits until the shell
// ended.
func (st *shellStream) Stop(ctx context.Context) error { return st.stop(ctx) }

// Close is the one teardown: it ends the streams, then deletes
// the pod and waits until it is gone (session.close).
func (st *shellStream) Close() error {
	return st.close(func() {
		st.stdinW.CloseWithError(errShellClosed)
		st.outR.CloseWithError(io.EOF)
	})
}

// errShellClosed is what calls return once Close came first.
var errShellClosed = errors.New("shell closed")

// sizeQueue is the exec's remotecommand.TerminalSizeQueue: at most one
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
// exec ended, ends the exec's resize loop.
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
