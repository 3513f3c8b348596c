package ptyshell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// HubOptions configures a Hub. Zero durations take the Default*
// constants, except IdleTimeout, where zero disables the idle end.
type HubOptions struct {
	// Size is the terminal size the shell starts with.
	Size Size
	// NewScreen, if set, makes the virtual terminal that every output byte
	// feeds from the start; an attach or a watch then begins with its
	// render. Nil keeps no screen: an attach starts with live output only,
	// and output produced while nobody was attached is not replayed.
	NewScreen func(cols, rows int) Screen
	// Recorder, if set, gets every output byte and every size change, in
	// the order the screen does, from the start.
	Recorder Recorder
	// Detached ends the shell with reason detached_timeout this long after
	// its writer left (300 s). The shell starts detached: its creator has
	// this long to attach.
	Detached time.Duration
	// IdleTimeout and MaxLifetime are the session's, counted across
	// connections. While a writer is attached its Serve enforces them;
	// otherwise the Hub does.
	IdleTimeout time.Duration
	MaxLifetime time.Duration // 8 h
	// OpenTimeout bounds Start (30 s); StopTimeout bounds a stop (15 s);
	// DrainTimeout bounds the wait for the second of the output's end and
	// the exit status (2 s).
	OpenTimeout  time.Duration
	StopTimeout  time.Duration
	DrainTimeout time.Duration
	// Clock drives the detached, idle and lifetime deadlines (SystemClock).
	Clock  Clock
	Logger *slog.Logger
	// OnDetach, if set, is called (without blocking) each time the writer
	// leaves without a take-over: the detached clock starts.
	OnDetach func()
}

// DefaultDetached is shell.timeouts.detachedSecs' default.
const DefaultDetached = 300 * time.Second

// Per-connection queues of a Hub: a writer's is lossless (the Hub waits
// for it), a watcher's drops the watcher when it overflows.
const (
	tapQueueFrames = 64
)

func (o HubOptions) withDefaults() HubOptions {
	o.Detached = cmp.Or(o.Detached, DefaultDetached)
	o.MaxLifetime = cmp.Or(o.MaxLifetime, DefaultMaxLifetime)
	o.OpenTimeout = cmp.Or(o.OpenTimeout, DefaultOpenTimeout)
	o.StopTimeout = cmp.Or(o.StopTimeout, DefaultStopTimeout)
	o.DrainTimeout = cmp.Or(o.DrainTimeout, DefaultDrainTimeout)
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// HubResult says how a Hub's shell ended, for the SHELL_CLOSED row.
type HubResult struct {
	Reason            Reason
	ExitCode          int // -1 when unknown
	BytesIn, BytesOut int64
	Err               error
}

// Hub is the server half of a v2 shell: one process whose life is apart
// from any connection. It owns the Stream — started once, stopped and
// closed once — reads its output at all times into the Screen, and lends
// it to connections: at most one writer (a new one takes over, the old one
// gets EXIT taken_over) and any number of read-only watchers. Each
// connection runs Serve over a tap of the Hub, so v1's frames, keepalive
// and EXIT rules hold on every connection.
type Hub struct {
	stream Stream
	opts   HubOptions
	clock  Clock
	log    *slog.Logger

	mu         sync.Mutex
	screen     Screen
	size       Size
	writer     *Tap
	watchers   map[*Tap]struct{}
	startedAt  time.Time
	lastInput  time.Time
	detachedAt time.Time
	endReason  Reason
	stopping   bool

	writeMu, resizeMu sync.Mutex
	changed           chan struct{} // a token when the writer came or went
	ending            chan error    // End's cause
	endOnce           sync.Once
	outDone           chan struct{} // the output ended
	outErr            error
	waitDone          chan struct{} // Wait returned
	status            ExitStatus
	waitErr           error
	done              chan struct{}
	result            HubResult
	bytesIn, bytesOut atomic.Int64
	wg                sync.WaitGroup
	ctx               context.Context // cancelled once the Hub is done
	cancel            context.CancelFunc
}

// NewHub returns a Hub over stream, created but not started.
func NewHub(stream Stream, opts HubOptions) *Hub {
	opts = opts.withDefaults()
	h := &Hub{
		stream: stream, opts: opts, clock: opts.Clock, log: opts.Logger,
		size: opts.Size.Clamp(), watchers: map[*Tap]struct{}{},
		changed: make(chan struct{}, 1), ending: make(chan error, 1),
		outDone: make(chan struct{}), waitDone: make(chan struct{}), done: make(chan struct{}),
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	if opts.NewScreen != nil {
		h.screen = opts.NewScreen(h.size.Cols, h.size.Rows)
	}
	return h
}

// Start starts the process, applies the size and begins reading its
// output; ctx bounds it together with OpenTimeout. From then on the shell
// runs detached until a writer attaches. On an error the stream is closed
// and the Hub is done.
func (h *Hub) Start(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(ctx, h.opts.OpenTimeout)
	defer cancel()
	if err := h.stream.Start(sctx); err != nil {
		h.result = HubResult{Reason: ReasonError, ExitCode: ExitCodeRuntime, Err: fmt.Errorf("start: %w", err)}
		h.closeStream()
		h.cancel()
		close(h.done)
		return err
	}
	now := h.clock.Now()
	h.mu.Lock()
	h.startedAt, h.lastInput, h.detachedAt = now, now, now
	h.mu.Unlock()
	h.spawn(h.outputLoop)
	h.spawn(h.waitLoop)
	h.firstResize(ctx)
	go h.control()
	return nil
}

func (h *Hub) spawn(f func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
}

// firstResize applies the start size, retrying while the process is being
// set up, as Serve does.
func (h *Hub) firstResize(ctx context.Context) {
	for try := 1; try <= resizeTries; try++ {
		if h.stream.Resize(ctx, h.size) == nil {
			return
		}
		t := time.NewTimer(time.Duration(try) * 10 * time.Millisecond)
		select {
		case <-t.C:
		case <-h.waitDone:
			t.Stop()
			return
		}
	}
	h.log.Debug("shell resize failed")
}

// Done is closed once the shell has ended and the stream is closed.
func (h *Hub) Done() <-chan struct{} { return h.done }

// Exited is closed once the shell's process has exited — before Done, and
// before any connection is sent the exit.
func (h *Hub) Exited() <-chan struct{} { return h.waitDone }

// Result is how the shell ended, once Done is closed.
func (h *Hub) Result() HubResult {
	<-h.done
	return h.result
}

// StartedAt is when the shell started running.
func (h *Hub) StartedAt() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.startedAt
}

// Detached reports whether no writer is attached.
func (h *Hub) Detached() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writer == nil
}

// Watchers counts the watchers attached now.
func (h *Hub) Watchers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.watchers)
}

// End ends the shell for cause, as Serve reads a cancelled context's cause
// (ErrTerminated, ErrServerShutdown): the writer and the watchers get EXIT
// with its reason, and the process is stopped. Only the first call counts.
func (h *Hub) End(cause error) {
	h.endOnce.Do(func() { h.ending <- cause })
}

// outputLoop reads the process's output until it ends, feeding the screen
// and the connections (deliver).
func (h *Hub) outputLoop() {
	buf := make([]byte, MaxDataPayload)
	for {
		n, err := h.stream.Read(buf)
		if n > 0 {
			h.bytesOut.Add(int64(n))
			h.deliver(append([]byte(nil), buf[:n]...))
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				h.outErr = err
			}
			close(h.outDone)
			return
		}
	}
}

// deliver feeds chunk to the screen and every watcher under the lock, then
// to the writer outside it. A watcher whose queue is full is dropped
// (watcher_lagged); the writer's queue is waited for — lossless and bounded,
// pushing back on the process — until it leaves or is taken over. A writer
// that attaches meanwhile has chunk in its render already.
func (h *Hub) deliver(chunk []byte) {
	h.mu.Lock()
	if h.screen != nil {
		_, _ = h.screen.Write(chunk) // an in-memory terminal; nothing to report
	}
	if h.opts.Recorder != nil {
		_ = h.opts.Recorder.Output(h.clock.Now(), chunk) // the recorder keeps its error
	}
	for w := range h.watchers {
		select {
		case w.out <- chunk:
		default:
			h.dropLocked(w, ErrWatcherLagged)
		}
	}
	wr := h.writer
	h.mu.Unlock()
	if wr != nil {
		select {
		case wr.out <- chunk:
		case <-wr.cut:
		}
	}
}

func (h *Hub) waitLoop() {
	st, err := h.stream.Wait(h.ctx)
	h.status, h.waitErr = st, err
	close(h.waitDone)
}
