package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/cairn-dev/cairn/ptyshell"
)

// removedWait bounds how long Wait looks for a removal behind a SIGKILL it
// did not send: a force-remove kills the container first and removes it
// just after.
const removedWait = time.Second

// shellStream is one shell container's terminal and life: ptyshell.Stream
// over the engine.
type shellStream struct {
	*attachment
	stopping atomic.Bool // Stop or Close asked the container to end
}

var _ ptyshell.Stream = (*shellStream)(nil)

// Start attaches, registers the wait for the next exit, then starts the
// container. The input side is never half-closed.
func (st *shellStream) Start(ctx context.Context) error {
	return st.start(ctx, container.AttachOptions{
		Stream: true, Stdin: true, Stdout: true, Stderr: true, DetachKeys: st.s.cfg.DetachKeys,
	})
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

// Wait reports how the container ended (exitStatus), and takes a SIGKILL
// cairn did not send for a removal when the container goes just after.
func (st *shellStream) Wait(ctx context.Context) (ptyshell.ExitStatus, error) {
	es, err := st.exitStatus(ctx)
	if err != nil || es.Removed || es.OOMKilled || es.Code != ptyshell.ExitCodeKilled || st.stopping.Load() {
		return es, err
	}
	es.Removed = st.removedSoon(ctx)
	return es, nil
}

// removedSoon reports whether the container is removed within removedWait:
// a SIGKILL cairn did not send is, usually, a force-remove by someone else
// (DELETE /v1/shells on another replica).
func (st *shellStream) removedSoon(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removedWait)
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

// Close is the one teardown, with a deadline of stopSecs + 10 s:
// the attach connection closes (unblocking both pumps), the container is
// stopped, then removed by force, and the wait ends.
func (st *shellStream) Close() error {
	st.stopping.Store(true)
	return st.teardown(time.Duration(st.s.cfg.StopSecs)*time.Second+10*time.Second, st.stop)
}
