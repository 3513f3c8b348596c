package ptyshell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// ServeOptions configures one server session. Zero durations take the
// Default* constants (except IdleTimeout, where zero disables the idle
// end).
type ServeOptions struct {
	// Status is the template of both STATUS frames (shell_id, container,
	// workspace_id, workspace_name). Serve fills in the state, the two
	// timeouts and an empty features list.
	Status Status
	// Size is the handshake's terminal size, applied after start unless a
	// RESIZE arrived first. A zero Size applies nothing.
	Size Size

	// IdleTimeout ends the session after this long without INPUT; zero
	// disables the idle end. Only INPUT resets it, never pings or RESIZE.
	IdleTimeout time.Duration
	// IdleWarning is how long before the idle end NOTICE idle_warning is
	// sent (60 s); negative disables the warning.
	IdleWarning time.Duration
	// MaxLifetime ends the session this long after "running" (8 h).
	MaxLifetime time.Duration
	// LifetimeWarning is how long before the lifetime end NOTICE
	// lifetime_warning is sent (300 s); negative disables the warning.
	LifetimeWarning time.Duration

	PingInterval time.Duration // 20 s: a Ping control frame this often
	PongWait     time.Duration // 60 s: a client silent this long is gone
	WriteWait    time.Duration // 10 s: bound on each write to the socket

	// OpenTimeout bounds the time from OpenedAt to "running" (30 s).
	OpenTimeout time.Duration
	// OpenedAt is when the request arrived; zero means when Serve was
	// called.
	OpenedAt time.Time
	// StopTimeout bounds Stream.Stop (15 s: stopSecs plus a margin).
	StopTimeout time.Duration
	// DrainTimeout is how long Serve waits for the second of the output's
	// EOF and the process's exit status once the first has arrived (2 s).
	DrainTimeout time.Duration
	// CloseWait is how long Serve waits for the client's close frame after
	// sending its own (2 s).
	CloseWait time.Duration

	// Clock drives the idle and lifetime timers and the resize debounce
	// (SystemClock).
	Clock Clock
	// Logger receives debug lines for failed resizes and error lines for a
	// failed teardown. Terminal content is never logged.
	Logger *slog.Logger

	// Running, if set, is called once the shell is running (to mark
	// the registry entry and write the SHELL_OPENED audit row). An error
	// ends the session with fatal ERROR audit_unavailable and EXIT "error".
	// ctx is cancelled when the session ends.
	Running func(ctx context.Context) error
	// OnInput, if set, is called from the socket reader for every INPUT
	// frame, with the clock's time and the payload size (the registry's
	// last input, the bytes metric). It must not block.
	OnInput func(at time.Time, n int)

	// v2 (a session that outlives its connections, Hub): zero values keep
	// v1's behaviour.

	// ReadOnly refuses INPUT and RESIZE (a watcher): neither is applied,
	// and the first of each is answered with a non-fatal ERROR read_only.
	ReadOnly bool
	// LastInput, when set, is the session's last INPUT before this
	// connection: the idle timer counts from it rather than from
	// "running".
	LastInput time.Time
	// StartedAt, when set, is when the session first ran: the lifetime
	// counts from it rather than from this connection's "running".
	StartedAt time.Time
}

// Defaults of the durations of ServeOptions, HubOptions and SessionOptions.
const (
	DefaultIdleWarning     = 60 * time.Second
	DefaultMaxLifetime     = 8 * time.Hour
	DefaultLifetimeWarning = 300 * time.Second
	DefaultPingInterval    = 20 * time.Second
	DefaultPongWait        = 60 * time.Second
	DefaultWriteWait       = 10 * time.Second
	DefaultOpenTimeout     = 30 * time.Second
	DefaultStopTimeout     = 15 * time.Second
	DefaultDrainTimeout    = 2 * time.Second
	DefaultCloseWait       = 2 * time.Second
	// ResizeInterval is the least time between two applied resizes, at
	// both ends.
	ResizeInterval = 50 * time.Millisecond
)

// Queue sizes: the server's output queue bounds a session's memory to about
// outQueueFrames × 32 KiB.
const (
	outQueueFrames   = 64
	inputQueueFrames = 16
	resizeTries      = 10
	// eventQueue exceeds the number of events a session can report (each
	// reporting goroutine reports at most once, the reader twice), so a
	// report never blocks.
	eventQueue = 16
)

func (o ServeOptions) withDefaults() ServeOptions {
	o.IdleWarning = cmp.Or(o.IdleWarning, DefaultIdleWarning)
	o.MaxLifetime = cmp.Or(o.MaxLifetime, DefaultMaxLifetime)
	o.LifetimeWarning = cmp.Or(o.LifetimeWarning, DefaultLifetimeWarning)
	o.PingInterval = cmp.Or(o.PingInterval, DefaultPingInterval)
	o.PongWait = cmp.Or(o.PongWait, DefaultPongWait)
	o.WriteWait = cmp.Or(o.WriteWait, DefaultWriteWait)
	o.OpenTimeout = cmp.Or(o.OpenTimeout, DefaultOpenTimeout)
	o.StopTimeout = cmp.Or(o.StopTimeout, DefaultStopTimeout)
	o.DrainTimeout = cmp.Or(o.DrainTimeout, DefaultDrainTimeout)
	o.CloseWait = cmp.Or(o.CloseWait, DefaultCloseWait)
	if o.OpenedAt.IsZero() {
		o.OpenedAt = time.Now()
	}
	if o.Clock == nil {
		o.Clock = SystemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// ServeResult says how a session ended, for the SHELL_CLOSED audit row,
// the end log line and the metrics.
type ServeResult struct {
	// Reason is the EXIT reason that reached the client, or
	// ReasonClientClosed / ReasonClientGone when no EXIT could be sent
	// (also when the client vanished while EXIT was being written).
	Reason Reason
	// ExitCode is the EXIT frame's code; for an ending without EXIT, the
	// process's status if it was known, else -1.
	ExitCode int
	// Running reports whether the shell reached "running".
	Running bool
	// BytesIn counts INPUT payload bytes received; BytesOut OUTPUT payload
	// bytes written to the socket.
	BytesIn, BytesOut int64
	// UnknownFrames counts ignored frames of unknown type.
	UnknownFrames int64
	// Err is the failure behind the ending, for logs: the transport error
	// of client_gone, the stream error of reason "error", the protocol
	// violation. Nil for ordinary endings. It never holds terminal content.
	Err error
}

// Serve runs one shell session over conn, an upgraded websocket whose
// subprotocol is Subprotocol, bridging it to stream, a created but not yet
// started process. It sends STATUS "starting", starts the stream, sends
// STATUS "running" and then pumps both ways until the session ends,
// sends exactly one EXIT where one is due and the close frame, and closes
// both conn and stream (stream.Close exactly once, on every path) before
// returning.
//
// Cancelling ctx ends the session: with context.WithCancelCause, a cause of
// ErrTerminated selects reason "terminated" and anything else
// "server_shutdown". The stream's own calls run on a context detached from
// ctx, so a cancelled request cannot skip the stop and drain.
//
// Serve returns how the session ended; it has no error of its own.
func Serve(ctx context.Context, conn *websocket.Conn, stream Stream, opts ServeOptions) ServeResult {
	s := newServer(ctx, conn, stream, opts.withDefaults())
	return s.run(ctx)
}

// server is one session's state shared by its goroutines. Control state
// lives in run's ending value and is touched by run alone.
type server struct {
	conn   *websocket.Conn
	stream Stream
	opts   ServeOptions
	clock  Clock
	log    *slog.Logger

	out        *outbox
	writerDone chan struct{}
	events     chan event
	input      chan []byte
	sizes      *sizeSlot
	started    chan struct{} // closed once Start succeeded
	sized      chan struct{} // closed once the first size was applied (or given up on)
	exited     chan struct{} // closed once Wait returned
	halt       chan struct{} // closed when run stops listening

	sessCtx   context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once // stream.Close, by closeStream only

	lastInput atomic.Int64 // clock time of the last INPUT, Unix nanoseconds
	bytesIn   atomic.Int64
	bytesOut  atomic.Int64
	unknown   atomic.Int64
	exitSent  atomic.Bool
	refused   atomic.Int32 // ReadOnly: a bit per frame type already refused
}

func newServer(ctx context.Context, conn *websocket.Conn, stream Stream, opts ServeOptions) *server {
	s := &server{
		conn:       conn,
		stream:     stream,
		opts:       opts,
		clock:      opts.Clock,
		log:        opts.Logger.With("shell_id", opts.Status.ShellID),
		writerDone: make(chan struct{}),
		events:     make(chan event, eventQueue),
		input:      make(chan []byte, inputQueueFrames),
		sizes:      newSizeSlot(),
		started:    make(chan struct{}),
		sized:      make(chan struct{}),
		exited:     make(chan struct{}),
		halt:       make(chan struct{}),
	}
	s.out = newOutbox(outQueueFrames, s.writerDone)
	// The stream's calls outlive a cancelled request: the stop and drain
	// still have to happen.
	s.sessCtx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return s
}

type eventKind int

const (
	evStarted      eventKind = iota // Start returned
	evRunningHook                   // Options.Running failed
	evWaited                        // Wait returned
	evOutputEnded                   // Read returned EOF (err nil) or failed
	evStopped                       // Stop returned
	evReaderEnded                   // the socket read failed or a close arrived
	evWriterFailed                  // a write or ping failed
	evProtocol                      // the client broke the frame rules
)

type event struct {
	kind      eventKind
	err       error
	status    ExitStatus
	closeCode int // evProtocol: 1003 or 1008
}

// report hands e to run; once run stops listening it is dropped.
func (s *server) report(e event) {
	select {
	case s.events <- e:
	case <-s.halt:
	}
}

func (s *server) spawn(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

type phase int

const (
	phaseStarting phase = iota
	phaseRunning
)

// ending is run's control state: what has happened, and how the session
// will end.
type ending struct {
	phase     phase
	runningAt time.Time

	// A forced ending (timer, kill, protocol error, audit failure).
	reason    Reason
	closeCode int
	message   string
	fatal     *ErrorInfo
	err       error
	stopping  bool

	// The client is gone: nothing more can be sent.
	gone       bool
	goneReason Reason
	goneErr    error

	// The two halves of a natural end, and the bound on waiting for the
	// second.
	gotWait  bool
	wait     ExitStatus
	waitErr  error
	gotEOF   bool
	outErr   error
	drain    *time.Timer
	drainEnd bool

	idle, life    Timer
	idleWarnedFor time.Time
	lifeWarned    bool
}

func (s *server) run(ctx context.Context) ServeResult {
	s.spawn(s.writeLoop)
	s.spawn(s.readLoop)
	s.spawn(s.pingLoop)
	s.putControl(FrameStatus, s.status(StateStarting))

	openLeft := s.opts.OpenTimeout - time.Since(s.opts.OpenedAt)
	startCtx, cancelStart := context.WithTimeout(s.sessCtx, openLeft)
	defer cancelStart()
	s.spawn(func() { s.report(event{kind: evStarted, err: s.stream.Start(startCtx)}) })
	openTimer := time.NewTimer(max(openLeft, 0))
	defer openTimer.Stop()

	var e ending
	ctxDone := ctx.Done()
	for !s.ready(&e) {
		select {
		case ev := <-s.events:
			s.handle(&e, ev)
		case <-ctxDone:
			ctxDone = nil
			s.endByCause(&e, context.Cause(ctx))
		case <-openTimer.C:
			if e.phase == phaseStarting {
				s.fail(&e, ErrorOpenTimeout, fmt.Sprintf("the shell did not start within %s", humanDuration(s.opts.OpenTimeout)),
					errors.New("open timeout"))
			}
		case <-timerC(e.idle):
			s.onIdle(&e)
		case <-timerC(e.life):
			s.onLifetime(&e)
		case <-drainC(e.drain):
			e.drainEnd = true
		}
	}
	stopTimer(e.idle)
	stopTimer(e.life)
	if e.drain != nil {
		e.drain.Stop()
	}
	return s.finish(&e)
}

// ready reports whether the session can be finished now.
func (s *server) ready(e *ending) bool {
	switch {
	case e.gone:
		return true
	case e.phase == phaseStarting:
		return e.reason != ""
	case e.gotWait && (e.gotEOF || e.outErr != nil):
		return true
	}
	return e.drainEnd
}

func (s *server) handle(e *ending, ev event) {
	switch ev.kind {
	case evStarted:
		if ev.err != nil {
			code, msg := ErrorRuntime, "the shell could not be started"
			if errors.Is(ev.err, context.DeadlineExceeded) {
				code, msg = ErrorOpenTimeout, fmt.Sprintf("the shell did not start within %s", humanDuration(s.opts.OpenTimeout))
			}
			s.fail(e, code, msg, fmt.Errorf("start: %w", ev.err))
			return
		}
		s.enterRunning(e)
	case evRunningHook:
		s.fail(e, ErrorAuditUnavailable, "the session could not be audited", fmt.Errorf("running: %w", ev.err))
	case evWaited:
		e.gotWait, e.wait, e.waitErr = true, ev.status, ev.err
		s.armDrain(e)
	case evOutputEnded:
		e.gotEOF, e.outErr = ev.err == nil, ev.err
		s.armDrain(e)
	case evStopped:
		if ev.err != nil {
			s.log.Warn("shell stop failed", "err", ev.err)
		}
		s.armDrain(e)
	case evReaderEnded:
		e.gone, e.goneReason, e.goneErr = true, ClientLeft(ev.err), ev.err
	case evWriterFailed:
		e.gone, e.goneReason, e.goneErr = true, ReasonClientGone, ev.err
	case evProtocol:
		msg := "the client sent a malformed control frame"
		if ev.closeCode == websocket.CloseUnsupportedData {
			msg = "the client sent a text frame"
		}
		s.end(e, ReasonProtocolError, ev.closeCode, msg, nil, ev.err)
	}
}

// enterRunning follows a successful Start: timers, STATUS running, then the
// pumps. The timers are armed before STATUS running is enqueued, so a
// client that has seen "running" knows they are counting.
func (s *server) enterRunning(e *ending) {
	if e.phase != phaseStarting || e.reason != "" {
		return
	}
	e.phase = phaseRunning
	e.runningAt = s.clock.Now()
	s.lastInput.Store(e.runningAt.UnixNano())
	if !s.opts.StartedAt.IsZero() {
		e.runningAt = s.opts.StartedAt
	}
	if !s.opts.LastInput.IsZero() {
		s.lastInput.Store(s.opts.LastInput.UnixNano())
	}
	if s.opts.IdleTimeout > 0 {
		last := time.Unix(0, s.lastInput.Load())
		e.idle = s.clock.NewTimer(max(last.Add(s.opts.IdleTimeout-max(s.opts.IdleWarning, 0)).Sub(s.clock.Now()), 0))
	}
	e.life = s.clock.NewTimer(max(e.runningAt.Add(s.opts.MaxLifetime-max(s.opts.LifetimeWarning, 0)).Sub(s.clock.Now()), 0))
	s.putControl(FrameStatus, s.status(StateRunning))
	close(s.started)
	s.spawn(s.outputLoop)
	s.spawn(s.inputLoop)
	s.spawn(s.resizeLoop)
	s.spawn(func() {
		st, err := s.stream.Wait(s.sessCtx)
		close(s.exited)
		s.report(event{kind: evWaited, status: st, err: err})
	})
	if s.opts.Running != nil {
		s.spawn(func() {
			if err := s.opts.Running(s.sessCtx); err != nil {
				s.report(event{kind: evRunningHook, err: err})
			}
		})
	}
}
