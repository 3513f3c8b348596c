package wsexec

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// ServeOptions shape one session; zero durations take the defaults.
type ServeOptions struct {
	MaxLifetime time.Duration // from start; default 8 h
	// Timeout, when set, ends the command this long after it started,
	// with reason timeout: the one its request gave.
	Timeout      time.Duration
	OpenTimeout  time.Duration // upgrade → started; default 30 s
	PingInterval time.Duration // default 20 s
	PongWait     time.Duration // a silent client is gone after this; default 60 s
	WriteWait    time.Duration // per write; default 10 s
	StopTimeout  time.Duration // Stop, then the wait for the status; default 13 s
	DrainTimeout time.Duration // how long output and exit may trail each other; default 2 s
	// Starting runs after the upgrade, before the command starts (the
	// EXEC_STARTED audit row): an error ends the session with reason
	// error and the command never runs.
	Starting func(ctx context.Context) error
	Logger   *slog.Logger
}

func (o ServeOptions) withDefaults() ServeOptions {
	o.MaxLifetime = cmp.Or(o.MaxLifetime, ptyshell.DefaultMaxLifetime)
	o.OpenTimeout = cmp.Or(o.OpenTimeout, ptyshell.DefaultOpenTimeout)
	o.PingInterval = cmp.Or(o.PingInterval, ptyshell.DefaultPingInterval)
	o.PongWait = cmp.Or(o.PongWait, ptyshell.DefaultPongWait)
	o.WriteWait = cmp.Or(o.WriteWait, ptyshell.DefaultWriteWait)
	o.StopTimeout = cmp.Or(o.StopTimeout, 13*time.Second)
	o.DrainTimeout = cmp.Or(o.DrainTimeout, ptyshell.DefaultDrainTimeout)
	if o.Starting == nil {
		o.Starting = func(context.Context) error { return nil }
	}
	o.Logger = cmp.Or(o.Logger, slog.New(slog.DiscardHandler))
	return o
}

// ServeResult is how a session ended, for the audit row and the log.
type ServeResult struct {
	Reason   Reason
	ExitCode int   // the command's, else ExitCodeRuntime
	BytesIn  int64 // stdin bytes delivered to the command
	BytesOut int64 // stdout and stderr bytes sent
	Started  bool  // the command was started
	Err      error // what failed, for reason error
}

// closeWait bounds the wait for the peer's close frame after ours.
const closeWait = ptyshell.DefaultCloseWait

// errSealed is what a write gets once the status has been sent.
var errSealed = errors.New("wsexec: session ended")

// session is one served exec.
type session struct {
	conn *websocket.Conn
	proc Process
	o    ServeOptions

	alive  func()     // moves the read deadline: a message arrived
	wmu    sync.Mutex // one writer of data frames at a time
	sealed bool       // guarded by wmu: the status went, nothing follows

	in, out atomic.Int64
	readerr chan error // the reader's end; buffered
	outerr  chan error // Output's end; buffered
	waited  chan waitResult

	// Touched by the goroutine of run only.
	reading    bool // the reader was started
	readerDone bool // its end was received
	outDone    bool // Output's end was received
	closeCode  int  // overrides the reason's close code (1003: a text frame)

	closeOnce sync.Once // proc.Close, by teardown only
}

// teardown closes proc, once: before the status where one is sent, else
// when Serve ends.
func (s *session) teardown() {
	s.closeOnce.Do(func() {
		if err := s.proc.Close(); err != nil {
			s.o.Logger.Error("exec teardown failed", "err", err)
		}
	})
}

type waitResult struct {
	st  ExitStatus
	err error
}

// Serve bridges an upgraded websocket to proc until the command ends, the
// client goes, the lifetime passes or ctx is cancelled (its cause selects
// terminated or server_shutdown), and returns how it ended. It sends
// exactly one status frame where a client is left to read it, closes proc
// (the teardown) exactly once — before that status, so a client that read
// it finds the container gone and the workspace's volume free for a
// teardown — and the connection before it returns, and leaves no goroutine
// behind.
func Serve(ctx context.Context, conn *websocket.Conn, proc Process, o ServeOptions) ServeResult {
	s := &session{conn: conn, proc: proc, o: o.withDefaults(), readerr: make(chan error, 1),
		outerr: make(chan error, 1), waited: make(chan waitResult, 1)}
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	res := s.run(ctx, wctx, &wg)
	s.teardown()
	_ = conn.Close() // the session is over either way
	cancel()
	wg.Wait()
	res.BytesIn, res.BytesOut = s.in.Load(), s.out.Load()
	return res
}

// run starts the command and the pumps and ends the session.
func (s *session) run(ctx, wctx context.Context, wg *sync.WaitGroup) ServeResult {
	s.alive = keepAlive(s.conn, s.o.PongWait, s.o.WriteWait)
	if res, ok := s.start(ctx); !ok {
		s.finish(res)
		return res
	}
	s.reading = true
	spawn(wg, func() { s.readerr <- s.read() })
	spawn(wg, func() { s.outerr <- s.proc.Output(s.writer(ChannelStdout), s.writer(ChannelStderr)) })
	spawn(wg, func() {
		st, err := s.proc.Wait(wctx)
		s.waited <- waitResult{st, err}
	})
	stopPings := s.ping(wg)
	defer stopPings()
	res := s.await(ctx)
	res.Started = true
	s.finish(res)
	return res
}

func spawn(wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		f()
	}()
}

// start runs the Starting hook, then Start, under the open timeout.
func (s *session) start(ctx context.Context) (ServeResult, bool) {
	octx, cancel := context.WithTimeout(ctx, s.o.OpenTimeout)
	defer cancel()
	if err := s.o.Starting(octx); err != nil {
		return failed("the command could not be recorded, so it did not run", err), false
	}
	if err := s.proc.Start(octx); err != nil {
		return failed("the command's container could not start", err), false
	}
	return ServeResult{}, true
}

// failed is an end by a failure under the command. Its client reads the
// sentence alone, as a shell's would: the cause is the runtime's own text
// (an engine's names the host's socket and paths) and goes to the log.
func failed(sentence string, err error) ServeResult {
	return ServeResult{Reason: ReasonError, ExitCode: ExitCodeRuntime, Err: &failure{sentence: sentence, cause: err}}
}

// failure is a runtime failure: a sentence for the client, a cause for the
// log.
type failure struct {
	sentence string
	cause    error
}

func (f *failure) Error() string { return f.sentence + ": " + f.cause.Error() }
func (f *failure) Unwrap() error { return f.cause }

// ping pings the client every interval until the returned func is called.
func (s *session) ping(wg *sync.WaitGroup) func() {
	done := make(chan struct{})
	spawn(wg, func() { pingUntil(s.conn, s.o.PingInterval, s.o.WriteWait, done) })
	return func() { close(done) }
}

// keepAlive sets what both ends read under: the read limit and the
// shell's keepalive (ptyshell.KeepAlive). It returns what moves the read
// deadline, for every message read.
func keepAlive(conn *websocket.Conn, pongWait, writeWait time.Duration) (alive func()) {
	conn.SetReadLimit(ReadLimit)
	return ptyshell.KeepAlive(conn, pongWait, writeWait)
}

// pingUntil pings the peer every interval until done is closed or a ping
// fails: the reader then sees the peer gone. Both ends ping.
func pingUntil(conn *websocket.Conn, interval, writeWait time.Duration, done <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeWait)) != nil {
				return
			}
		}
	}
}
