package ptyshell

import (
	"context"
	"errors"
	"io"
	"sync"
)

// ErrHubEnded is what Attach returns once the shell is ending or ended.
var ErrHubEnded = errors.New("ptyshell: the shell has ended")

// Tap is one connection's view of a Hub: a Stream for Serve. A writer's
// tap types and resizes into the shell; a watcher's only reads. Its output
// starts with the screen's render, then live output. Closing a tap leaves
// the shell running; stopping one stops the shell only when it is the
// writer and the reason is the shell's end (idle, lifetime, kill, …), never
// for a take-over.
type Tap struct {
	h       *Hub
	role    string
	size    Size
	out     chan []byte
	pending []byte // the rest of the render or of a chunk; Read's alone

	cut, gone         chan struct{}
	cutOnce, goneOnce sync.Once
	ctx               context.Context
	cancel            context.CancelCauseFunc
}

var (
	_ Stream        = (*Tap)(nil)
	_ ReasonStopper = (*Tap)(nil)
)

// Attach lends the shell to a new connection in role (RoleWriter or
// RoleWatcher). A writer's size, when valid and different, is applied to
// the shell and the screen before the render; a writer takes the shell
// over: the previous writer's Serve ends with taken_over, and from now on
// its input is dropped. ctx's values (not its cancellation) pass to the
// tap's context. Reasons: ErrHubEnded.
func (h *Hub) Attach(ctx context.Context, role string, size Size) (*Tap, error) {
	writer := role == RoleWriter
	if writer && size.Valid() {
		if err := h.resizeTo(ctx, size); err != nil {
			h.log.Debug("shell resize failed", "err", err) // Serve's first resize retries it
		}
	}
	t := &Tap{h: h, role: role, out: make(chan []byte, tapQueueFrames), cut: make(chan struct{}), gone: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	h.mu.Lock()
	if h.stopping || h.startedAt.IsZero() {
		h.mu.Unlock()
		return nil, ErrHubEnded
	}
	if h.screen != nil {
		t.pending = h.screen.Render()
	}
	var old *Tap
	if writer {
		old, h.writer, t.size = h.writer, t, h.size
	} else {
		h.watchers[t] = struct{}{}
	}
	h.mu.Unlock()
	if old != nil {
		old.cutOff()
		old.cancel(ErrTakenOver)
	}
	h.signal()
	return t, nil
}

// Context is the context to serve the tap with: the Hub cancels it with
// the cause that ends this connection (ErrTakenOver, ErrWatcherLagged, the
// shell's end).
func (t *Tap) Context() context.Context { return t.ctx }

// Role is RoleWriter or RoleWatcher.
func (t *Tap) Role() string { return t.role }

// Options completes base (the session's identity and keepalive) for this
// connection: the role, and the idle and lifetime clocks of the session
// rather than of the connection; a watcher is read-only, has no idle end
// and applies no size.
func (t *Tap) Options(base ServeOptions) ServeOptions {
	h := t.h
	h.mu.Lock()
	base.StartedAt, base.LastInput = h.startedAt, h.lastInput
	h.mu.Unlock()
	base.Status.Role = t.role
	base.MaxLifetime = h.opts.MaxLifetime
	if t.role == RoleWatcher {
		base.ReadOnly, base.IdleTimeout, base.Size = true, 0, Size{}
		return base
	}
	base.IdleTimeout, base.Size = h.opts.IdleTimeout, t.size
	return base
}

// dropLocked removes a watcher from the output and ends its Serve with
// cause; h.mu is held.
func (h *Hub) dropLocked(w *Tap, cause error) {
	delete(h.watchers, w)
	w.cutOff()
	w.cancel(cause)
}

// left takes a closed tap off the Hub; a writer leaving starts the
// detached clock.
func (h *Hub) left(t *Tap) {
	h.mu.Lock()
	wasWriter := h.writer == t
	if wasWriter {
		h.writer, h.detachedAt = nil, h.clock.Now()
	}
	delete(h.watchers, t)
	h.mu.Unlock()
	h.signal()
	if wasWriter && h.opts.OnDetach != nil {
		h.opts.OnDetach()
	}
}

func (h *Hub) isWriter(t *Tap) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writer == t
}

// input writes the writer's INPUT; a taken-over writer's is dropped.
func (h *Hub) input(t *Tap, p []byte) (int, error) {
	h.mu.Lock()
	ok := h.writer == t
	if ok {
		h.lastInput = h.clock.Now()
	}
	h.mu.Unlock()
	if !ok {
		return len(p), nil
	}
	h.writeMu.Lock()
	defer h.writeMu.Unlock()
	n, err := h.stream.Write(p)
	h.bytesIn.Add(int64(n))
	return n, err
}

// resizeTo applies size to the screen and the shell's terminal.
func (h *Hub) resizeTo(ctx context.Context, size Size) error {
	h.mu.Lock()
	changed := size != h.size
	h.size = size
	if changed && h.screen != nil {
		h.screen.Resize(size.Cols, size.Rows)
	}
	if changed && h.opts.Recorder != nil {
		_ = h.opts.Recorder.Resize(h.clock.Now(), size.Cols, size.Rows) // the recorder keeps its error
	}
	h.mu.Unlock()
	h.resizeMu.Lock()
	defer h.resizeMu.Unlock()
	return h.stream.Resize(ctx, size)
}

func (t *Tap) cutOff() { t.cutOnce.Do(func() { close(t.cut) }) }

func (t *Tap) detach() {
	t.cutOff()
	t.goneOnce.Do(func() { close(t.gone) })
}

// Start does nothing: the Hub started the shell.
func (t *Tap) Start(context.Context) error { return nil }

// Read returns the render, then the shell's output from the moment of
// Attach, and io.EOF once the output has ended or the tap was detached.
// A read takes all the output already queued that fits p, so a burst
// leaves in a few large frames rather than one per terminal read.
func (t *Tap) Read(p []byte) (int, error) {
	if len(t.pending) > 0 {
		return t.fill(p, t.give(p, nil)), nil
	}
	select {
	case c := <-t.out:
		return t.fill(p, t.give(p, c)), nil
	default:
	}
	select {
	case c := <-t.out:
		return t.fill(p, t.give(p, c)), nil
	case <-t.gone:
		return 0, io.EOF
	case <-t.h.outDone:
		select {
		case c := <-t.out:
			return t.fill(p, t.give(p, c)), nil
		default:
			return 0, io.EOF
		}
	}
}

// fill tops p[n:] up with output that is queued already, never waiting.
func (t *Tap) fill(p []byte, n int) int {
	for n < len(p) {
		if len(t.pending) == 0 {
			select {
			case c := <-t.out:
				t.pending = c
			default:
				return n
			}
		}
		n += t.give(p[n:], nil)
	}
	return n
}

func (t *Tap) give(p, chunk []byte) int {
	if chunk != nil {
		t.pending = chunk
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n
}

// Write types p into the shell when this tap is the writer; otherwise p
// is dropped.
func (t *Tap) Write(p []byte) (int, error) {
	if t.role != RoleWriter {
		return len(p), nil
	}
	return t.h.input(t, p)
}

// Resize resizes the shell when this tap is the writer.
func (t *Tap) Resize(ctx context.Context, size Size) error {
	if t.role != RoleWriter || !t.h.isWriter(t) {
		return nil
	}
	return t.h.resizeTo(ctx, size)
}

// Wait returns the shell's exit status, or a zero status once the tap was
// detached (the shell goes on).
func (t *Tap) Wait(ctx context.Context) (ExitStatus, error) {
	select {
	case <-t.h.waitDone:
		return t.h.status, t.h.waitErr
	case <-t.gone:
		return ExitStatus{}, nil
	case <-ctx.Done():
		return ExitStatus{}, ctx.Err()
	}
}

// Stop stops as StopFor with no reason.
func (t *Tap) Stop(ctx context.Context) error { return t.StopFor(ctx, "") }

// StopFor ends this connection's part: a watcher, a taken-over writer, or
// a take-over only detach; the writer ending for any other reason stops
// the shell, and returns once it has ended or ctx is done.
func (t *Tap) StopFor(ctx context.Context, reason Reason) error {
	h := t.h
	if t.role != RoleWriter || reason == ReasonTakenOver || reason == ReasonWatcherLagged || !h.isWriter(t) {
		t.detach()
		return nil
	}
	h.stopFor(reason, &EndError{Reason: reason, Message: endMessage(reason)})
	select {
	case <-h.waitDone:
	case <-ctx.Done():
	}
	return nil
}

// Close leaves the shell running: it detaches the tap, and a writer's
// leaving starts the detached clock.
func (t *Tap) Close() error {
	t.detach()
	t.h.left(t)
	return nil
}
