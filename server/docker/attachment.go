package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"

	"github.com/cairn-dev/cairn/ptyshell"
)

// attachment is one created session container's streams and life, the
// part a shell's terminal (shellStream) and an exec's process (execProc)
// share: the attach, the wait for its exit, the stop and the teardown.
type attachment struct {
	s        *Shells
	id, name string
	kind     string // KindShell or KindExec: its messages name "the <kind> container"

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{} // closed by the teardown: unblocks start, Wait and Resize
	waited    chan waitResult

	mu         sync.Mutex
	attach     *types.HijackedResponse
	waitCancel context.CancelFunc
}

type waitResult struct {
	res container.WaitResponse
	err error
}

func newAttachment(s *Shells, kind, id, name string) *attachment {
	return &attachment{s: s, id: id, name: name, kind: kind, closed: make(chan struct{}), waited: make(chan waitResult, 1)}
}

// bound returns ctx, also cancelled once the attachment is closed.
func (a *attachment) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-a.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// start attaches with opts, registers the wait for the next exit, then
// starts the container: output from the first instant is on the attach
// stream, and an exit at once is not missed.
func (a *attachment) start(ctx context.Context, opts container.AttachOptions) error {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	att, err := a.s.cli.ContainerAttach(ctx, a.id, opts)
	if err != nil {
		return a.startError("attach to the "+a.kind+" container", ctx, err)
	}
	// The wait runs on a context only the teardown cancels: it must
	// outlive start.
	wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
	a.mu.Lock()
	a.waitCancel = wcancel
	closed := a.isClosed()
	if !closed {
		a.attach = &att
	}
	a.mu.Unlock()
	if closed {
		att.Close()
		wcancel()
		return errShellClosed
	}
	results, errs := a.s.cli.ContainerWait(wctx, a.id, container.WaitConditionNextExit)
	go func() {
		select {
		case res := <-results:
			a.waited <- waitResult{res: res}
		case err := <-errs:
			a.waited <- waitResult{err: err}
		}
	}()
	if err := a.s.cli.ContainerStart(ctx, a.id, container.StartOptions{}); err != nil {
		return a.startError("start the "+a.kind+" container", ctx, err)
	}
	return nil
}

// startError keeps a passed open deadline recognisable to Serve
// (open_timeout) and says which step failed.
func (a *attachment) startError(what string, ctx context.Context, err error) error {
	if a.isClosed() {
		return errShellClosed
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (a *attachment) isClosed() bool {
	select {
	case <-a.closed:
		return true
	default:
		return false
	}
}

func (a *attachment) attached() *types.HijackedResponse {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.attach
}

// Write writes p verbatim to the container's stdin.
func (a *attachment) Write(p []byte) (int, error) {
	att := a.attached()
	if att == nil {
		return 0, errShellClosed
	}
	return att.Conn.Write(p)
}

// exitStatus reports how the container ended, from the wait registered
// before start, with inspect for what the wait does not say: OOMKilled, a
// status the wait could not deliver, and a container removed underneath
// (Removed, with the status the wait reported, else 137).
func (a *attachment) exitStatus(ctx context.Context) (ptyshell.ExitStatus, error) {
	var w waitResult
	select {
	case w = <-a.waited:
	case <-ctx.Done():
		return ptyshell.ExitStatus{}, ctx.Err()
	}
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	waitOK := w.err == nil && w.res.Error == nil
	info, ierr := a.s.cli.ContainerInspect(ictx, a.id)
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
		return ptyshell.ExitStatus{}, fmt.Errorf("wait for the %s container: %w", a.kind, errors.Join(w.err, ierr))
	}
	oom := ierr == nil && info.State != nil && info.State.OOMKilled
	return ptyshell.ExitStatus{Code: code, OOMKilled: oom}, nil
}

// stop sends the container's stop signal, then SIGKILL after stopSecs; a
// container that already ended or went is no error.
func (a *attachment) stop(ctx context.Context) error {
	secs := a.s.cfg.StopSecs
	err := a.s.cli.ContainerStop(ctx, a.id, container.StopOptions{Timeout: &secs})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("stop the %s container: %w", a.kind, err)
	}
	return nil
}

// teardown is the one teardown, run once on a context of its own bounded
// by timeout, so no cancelled request can skip it: it closes the attach
// connection (unblocking every pump), runs before (a graceful stop; nil
// for none), removes the container by force (killing whatever still
// runs) and ends the wait. A failure is returned for the log; the reapers
// take what is left.
func (a *attachment) teardown(timeout time.Duration, before func(context.Context) error) error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		close(a.closed)
		att, wcancel := a.attach, a.waitCancel
		a.mu.Unlock()
		if att != nil {
			att.Close()
		}
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var beforeErr error
		if before != nil {
			beforeErr = before(ctx)
		}
		rmErr := a.s.cli.ContainerRemove(ctx, a.id, container.RemoveOptions{Force: true})
		if cerrdefs.IsNotFound(rmErr) {
			rmErr = nil
		} else if rmErr != nil {
			rmErr = fmt.Errorf("remove the %s container %s: %w", a.kind, a.name, rmErr)
		}
		if wcancel != nil {
			wcancel()
		}
		a.closeErr = errors.Join(beforeErr, rmErr)
	})
	return a.closeErr
}
