package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"

	"github.com/cairn-dev/cairn/ptyshell"
)

// removedWait bounds how long Wait looks for a removal behind a SIGKILL it
// did not send: a force-remove kills the container first and removes it
// just after.
const removedWait = time.Second

// shellStream is one shell container's terminal and life: ptyshell.Stream
// over the engine (PTYSHELL.md §7.3–§7.5).
type shellStream struct {
	s        *Shells
	id, name string

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{} // closed by Close: unblocks Start, Wait and Resize
	stopping  atomic.Bool   // Stop or Close asked the container to end
	waited    chan waitResult

	mu         sync.Mutex
	attach     *types.HijackedResponse
	waitCancel context.CancelFunc
}

type waitResult struct {
	res container.WaitResponse
	err error
}

var _ ptyshell.Stream = (*shellStream)(nil)

func newShellStream(s *Shells, id, name string) *shellStream {
	return &shellStream{s: s, id: id, name: name, closed: make(chan struct{}), waited: make(chan waitResult, 1)}
}

// bound returns ctx, also cancelled once the stream is closed.
func (st *shellStream) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-st.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Start attaches, registers the wait for the next exit, then starts the
// container (§7.3 steps 3–5): output from the first instant is on the
// attach stream, and an exit at once is not missed. The input side is
// never half-closed.
func (st *shellStream) Start(ctx context.Context) error {
	ctx, cancel := st.bound(ctx)
	defer cancel()
	att, err := st.s.cli.ContainerAttach(ctx, st.id, container.AttachOptions{
		Stream: true, Stdin: true, Stdout: true, Stderr: true, DetachKeys: st.s.cfg.DetachKeys,
	})
	if err != nil {
		return st.startError("attach to the shell container", ctx, err)
	}
	// The wait runs on a context only Close cancels: it must outlive Start.
	wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
	st.mu.Lock()
	st.waitCancel = wcancel
	closed := st.isClosed()
	if !closed {
		st.attach = &att
	}
	st.mu.Unlock()
	if closed {
		att.Close()
		wcancel()
		return errShellClosed
	}
	results, errs := st.s.cli.ContainerWait(wctx, st.id, container.WaitConditionNextExit)
	go func() {
		select {
		case res := <-results:
			st.waited <- waitResult{res: res}
		case err := <-errs:
			st.waited <- waitResult{err: err}
		}
	}()
	if err := st.s.cli.ContainerStart(ctx, st.id, container.StartOptions{}); err != nil {
		return st.startError("start the shell container", ctx, err)
	}
	return nil
}

// startError keeps a passed open deadline recognisable to Serve
// (open_timeout) and says which step failed.
func (st *shellStream) startError(what string, ctx context.Context, err error) error {
	if st.isClosed() {
		return errShellClosed
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (st *shellStream) isClosed() bool {
	select {
	case <-st.closed:
		return true
	default:
		return false
	}
}

func (st *shellStream) attached() *types.HijackedResponse {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.attach
}

// Read reads the terminal's raw output (a TTY stream is not multiplexed).
// After Close, or once the attach stream ended, it reports io.EOF.
func (st *shellStream) Read(p []byte) (int, error) {
	att := st.attached()
	if att == nil {
		return 0, io.EOF
	}
	n, err := att.Reader.Read(p)
	if err != nil && (errors.Is(err, io.EOF) || st.isClosed()) {
		return n, io.EOF
	}
	return n, err
}

// Write writes p verbatim to the terminal's input.
func (st *shellStream) Write(p []byte) (int, error) {
	att := st.attached()
	if att == nil {
		return 0, errShellClosed
	}
	return att.Conn.Write(p)
}

// Resize sets the terminal's size.
func (st *shellStream) Resize(ctx context.Context, size ptyshell.Size) error {
	ctx, cancel := st.bound(ctx)
	defer cancel()
	err := st.s.cli.ContainerResize(ctx, st.id, container.ResizeOptions{Height: uint(size.Rows), Width: uint(size.Cols)})
	if err != nil {
		return fmt.Errorf("resize the shell terminal: %w", err)
	}
	return nil
}

// Wait reports how the container ended, from the wait registered before
// start, with inspect for what the wait does not say: OOMKilled, a status
// the wait could not deliver, and a container removed underneath.
func (st *shellStream) Wait(ctx context.Context) (ptyshell.ExitStatus, error) {
	var w waitResult
	select {
	case w = <-st.waited:
	case <-ctx.Done():
		return ptyshell.ExitStatus{}, ctx.Err()
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	waitOK := w.err == nil && w.res.Error == nil
	info, ierr := st.s.cli.ContainerInspect(ictx, st.id)
	if cerrdefs.IsNotFound(ierr) {
		code := ptyshell.ExitCodeKilled
		if waitOK {
			code = int(w.res.StatusCode)
		}
		return ptyshell.ExitStatus{Code: code, Removed: true}, nil
	}
	var code int
	switch {
	case waitOK:
		code = int(w.res.StatusCode)
	case ierr == nil && info.State != nil && !info.State.Running:
		code = info.State.ExitCode
	default:
		if w.err == nil {
			w.err = errors.New(w.res.Error.Message)
		}
		return ptyshell.ExitStatus{}, fmt.Errorf("wait for the shell container: %w", errors.Join(w.err, ierr))
	}
	oom := ierr == nil && info.State != nil && info.State.OOMKilled
	if !oom && code == ptyshell.ExitCodeKilled && !st.stopping.Load() && st.removedSoon(ictx) {
		return ptyshell.ExitStatus{Code: code, Removed: true}, nil
	}
	return ptyshell.ExitStatus{Code: code, OOMKilled: oom}, nil
}

// removedSoon reports whether the container is removed within removedWait:
// a SIGKILL cairn did not send is, usually, a force-remove by someone else
// (DELETE /v1/shells on another replica).
func (st *shellStream) removedSoon(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, removedWait)
	defer cancel()
	results, errs := st.s.cli.ContainerWait(ctx, st.id, container.WaitConditionRemoved)
	select {
	case <-results:
		return true
	case err := <-errs:
		return cerrdefs.IsNotFound(err)
	}
}

// Stop sends the container's stop signal (SIGHUP) and SIGKILL after
// stopSecs; a container that already ended or went is no error.
func (st *shellStream) Stop(ctx context.Context) error {
	st.stopping.Store(true)
	return st.stop(ctx)
}

func (st *shellStream) stop(ctx context.Context) error {
	secs := st.s.cfg.StopSecs
	err := st.s.cli.ContainerStop(ctx, st.id, container.StopOptions{Timeout: &secs})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("stop the shell container: %w", err)
	}
	return nil
}

// Close is the one teardown (§7.5), run once on a context of its own with
// a deadline of stopSecs + 10 s, so no cancelled request can skip it: it
// closes the attach connection (unblocking both pumps), stops the
// container, removes it by force and ends the wait. A failure is returned
// for the log; the reapers take what is left.
func (st *shellStream) Close() error {
	st.closeOnce.Do(func() {
		st.stopping.Store(true)
		st.mu.Lock()
		close(st.closed)
		att, wcancel := st.attach, st.waitCancel
		st.mu.Unlock()
		if att != nil {
			att.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(st.s.cfg.StopSecs)*time.Second+10*time.Second)
		defer cancel()
		stopErr := st.stop(ctx)
		rmErr := st.s.cli.ContainerRemove(ctx, st.id, container.RemoveOptions{Force: true})
		if cerrdefs.IsNotFound(rmErr) {
			rmErr = nil
		} else if rmErr != nil {
			rmErr = fmt.Errorf("remove the shell container %s: %w", st.name, rmErr)
		}
		if wcancel != nil {
			wcancel()
		}
		st.closeErr = errors.Join(stopErr, rmErr)
	})
	return st.closeErr
}
