package ptyshell_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

func TestMain(m *testing.M) {
	if url := os.Getenv(terminalChildEnv); url != "" {
		os.Exit(terminalChild(url)) // a child process of TestTerminalRealSignal
	}
	os.Exit(ptyshelltest.CheckLeaks(m.Run()))
}

// served is one session: the fake process, the server running Serve on it,
// and a raw client.
type served struct {
	stream *ptyshelltest.Stream
	srv    *ptyshelltest.Server
	conn   *ptyshelltest.Conn
}

var testStatus = ptyshell.Status{ShellID: "01JSHELL", Container: "cairn.shell.ws1.01JSHELL", WorkspaceID: "ws1", WorkspaceName: "ws-alpha"}

// serve starts a session; configure sets up the fake before Serve sees it.
func serve(t *testing.T, opts ptyshell.ServeOptions, configure func(*ptyshelltest.Stream)) *served {
	t.Helper()
	stream := ptyshelltest.NewStream()
	if configure != nil {
		configure(stream)
	}
	if opts.Status.ShellID == "" {
		opts.Status = testStatus
	}
	srv := ptyshelltest.NewServer(t, stream, opts)
	return &served{stream: stream, srv: srv, conn: ptyshelltest.Dial(t, srv.URL)}
}

// running reads the two STATUS frames.
func (s *served) running(t *testing.T) {
	t.Helper()
	for _, state := range []string{ptyshell.StateStarting, ptyshell.StateRunning} {
		f, err := s.conn.Next()
		require.NoError(t, err)
		require.Equal(t, ptyshell.FrameStatus, f.Type)
		var st ptyshell.Status
		require.NoError(t, ptyshell.DecodeControl(f.Payload, &st))
		require.Equal(t, state, st.State)
	}
}

// echo types p and reads until its echo came back.
func (s *served) echo(t *testing.T, p string) {
	t.Helper()
	require.NoError(t, s.conn.SendInput([]byte(p)))
	_, err := s.conn.ReadOutput(p)
	require.NoError(t, err)
}

// ended reads to the end and checks the invariants of every ending with
// EXIT: exactly one, nothing after it, one teardown.
func (s *served) ended(t *testing.T, reason ptyshell.Reason, code, closeCode int) (ptyshelltest.Transcript, ptyshell.ServeResult) {
	t.Helper()
	tr := s.conn.Collect()
	// Read before Serve returns: the teardown came before the EXIT, so a
	// client that read it finds the workspace's volume free.
	require.Equal(t, 1, s.stream.Closes(), "teardowns by the time the client has its EXIT")
	res := s.srv.Result(t)
	require.Equal(t, 1, tr.Exits, "EXIT frames")
	require.Zero(t, tr.AfterExit, "frames after EXIT")
	require.Equal(t, ptyshell.Exit{ExitCode: code, Reason: reason, Message: tr.Exit.Message}, tr.Exit)
	require.NotEmpty(t, tr.Exit.Message)
	require.Equal(t, closeCode, tr.CloseCode)
	require.Equal(t, reason, res.Reason)
	require.Equal(t, code, res.ExitCode)
	require.Equal(t, 1, s.stream.Closes(), "teardowns")
	return tr, res
}

// gone waits for an ending without EXIT and checks its teardown.
func (s *served) gone(t *testing.T, reason ptyshell.Reason) ptyshell.ServeResult {
	t.Helper()
	res := s.srv.Result(t)
	require.Equal(t, reason, res.Reason)
	require.Equal(t, 1, s.stream.Closes(), "teardowns")
	return res
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), ptyshelltest.Guard)
	t.Cleanup(cancel)
	return ctx
}

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i/251)
	}
	return p
}

func TestServeOrder(t *testing.T) {
	t.Parallel()
	out := pattern(1 << 20)
	for name, exitFirst := range map[string]bool{"EOFFirst": false, "WaitFirst": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := serve(t, ptyshell.ServeOptions{}, func(st *ptyshelltest.Stream) {
				st.StartFunc = func(context.Context) error {
					go func() {
						if exitFirst { // the exit status arrives before the last output
							st.SetExit(ptyshell.ExitStatus{Code: 0})
						}
						_ = st.Print(out) // fails only if the session ended, which the test then reports
						st.Exit(0)
					}()
					return nil
				}
			})
			tr, res := s.ended(t, ptyshell.ReasonExited, 0, websocket.CloseNormalClosure)
			types := tr.Types()
			require.Equal(t, []ptyshell.FrameType{ptyshell.FrameStatus, ptyshell.FrameStatus}, types[:2])
			for _, typ := range types[2 : len(types)-1] {
				require.Equal(t, ptyshell.FrameOutput, typ)
			}
			require.Equal(t, ptyshell.FrameExit, types[len(types)-1])
			require.Equal(t, []string{"starting", "running"}, []string{tr.Statuses[0].State, tr.Statuses[1].State})
			for _, f := range tr.Frames {
				require.LessOrEqual(t, len(f.Payload), ptyshell.MaxDataPayload)
			}
			require.True(t, bytes.Equal(out, tr.Output), "every OUTPUT byte before EXIT")
			require.EqualValues(t, len(out), res.BytesOut)
			require.True(t, res.Running)
		})
	}
}

func TestServeStatus(t *testing.T) {
	t.Parallel()
	s := serve(t, ptyshell.ServeOptions{IdleTimeout: 30 * time.Minute, MaxLifetime: 2 * time.Hour}, func(st *ptyshelltest.Stream) {
		st.StartFunc = func(context.Context) error { go st.Exit(0); return nil }
	})
	tr, _ := s.ended(t, ptyshell.ReasonExited, 0, websocket.CloseNormalClosure)
	want := testStatus
	want.IdleTimeoutSecs, want.MaxLifetimeSecs, want.Features = 1800, 7200, []string{}
	want.State = "starting"
	require.Equal(t, want, tr.Statuses[0])
	want.State = "running"
	require.Equal(t, want, tr.Statuses[1])
}

func TestServeEchoAndExitCode(t *testing.T) {
	t.Parallel()
	s := serve(t, ptyshell.ServeOptions{}, func(st *ptyshelltest.Stream) {
		st.Echo = true
		st.OnInput = func(st *ptyshelltest.Stream, p []byte) {
			if bytes.Contains(p, []byte("exit 42\r")) {
				st.Exit(42)
			}
		}
	})
	s.running(t)
	s.echo(t, "echo hello\r")
	raw := []byte{0xff, 0x00, 0x1b, '[', 'A', 0x03, 0xc3} // any bytes, not only UTF-8, pass unchanged
	require.NoError(t, s.conn.SendInput(raw))
	got, err := s.conn.ReadOutput(string(raw))
	require.NoError(t, err)
	require.Equal(t, raw, got)
	require.NoError(t, s.conn.SendInput([]byte("exit 42\r")))
	_, res := s.ended(t, ptyshell.ReasonExited, 42, websocket.CloseNormalClosure)
	require.Equal(t, "echo hello\r"+string(raw)+"exit 42\r", string(s.stream.Input()))
	require.EqualValues(t, len(s.stream.Input()), res.BytesIn)
}

// TestServeEndings walks every ending that sends EXIT: exactly one EXIT,
// the reason and close code of that ending, one teardown.
func TestServeEndings(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	cases := []struct {
		name      string
		opts      ptyshell.ServeOptions
		configure func(*ptyshelltest.Stream)
		act       func(*served)
		reason    ptyshell.Reason
		code      int
		closeCode int
		fatal     string
	}{
		{name: "OOMKilled", configure: func(st *ptyshelltest.Stream) {
			st.StartFunc = func(context.Context) error {
				go func() { st.CloseOutput(); st.SetExit(ptyshell.ExitStatus{Code: 137, OOMKilled: true}) }()
				return nil
			}
		}, reason: ptyshell.ReasonOOMKilled, code: 137, closeCode: 1000},
		{name: "ContainerRemoved", configure: func(st *ptyshelltest.Stream) {
			st.StartFunc = func(context.Context) error {
				go func() { st.CloseOutput(); st.SetExit(ptyshell.ExitStatus{Code: 137, Removed: true}) }()
				return nil
			}
		}, reason: ptyshell.ReasonTerminated, code: 137, closeCode: 4002},
		{name: "Kill", act: func(s *served) { s.srv.Kill(ptyshell.ErrTerminated) },
			reason: ptyshell.ReasonTerminated, code: 129, closeCode: 4002},
		{name: "Shutdown", act: func(s *served) { s.srv.Kill(ptyshell.ErrServerShutdown) },
			reason: ptyshell.ReasonServerShutdown, code: 129, closeCode: 1001},
		{name: "OtherCancelCause", act: func(s *served) { s.srv.Kill(errors.New("whatever")) },
			reason: ptyshell.ReasonServerShutdown, code: 129, closeCode: 1001},
		{name: "TextFrame", act: func(s *served) { _ = s.conn.WriteMessage(websocket.TextMessage, []byte("hi")) },
			reason: ptyshell.ReasonProtocolError, code: 129, closeCode: 1003},
		{name: "MalformedResize", act: func(s *served) { _ = s.conn.SendFrame(ptyshell.FrameResize, []byte(`{"cols":"wide"}`)) },
			reason: ptyshell.ReasonProtocolError, code: 129, closeCode: 1008},
		{name: "StreamError", opts: ptyshell.ServeOptions{DrainTimeout: 50 * time.Millisecond},
			act:    func(s *served) { s.stream.FailRead(boom) },
			reason: ptyshell.ReasonError, code: 125, closeCode: 1011, fatal: ptyshell.ErrorRuntime},
		{name: "WaitError", act: func(s *served) { s.stream.CloseOutput(); s.stream.FailWait(boom) },
			reason: ptyshell.ReasonError, code: 125, closeCode: 1011, fatal: ptyshell.ErrorRuntime},
		{name: "OutputEndsWithoutStatus", opts: ptyshell.ServeOptions{DrainTimeout: 50 * time.Millisecond},
			act:    func(s *served) { s.stream.CloseOutput() },
			reason: ptyshell.ReasonError, code: 125, closeCode: 1011, fatal: ptyshell.ErrorRuntime},
		{name: "StopFails", opts: ptyshell.ServeOptions{DrainTimeout: 50 * time.Millisecond},
			configure: func(st *ptyshelltest.Stream) { st.StopFunc = func(context.Context) error { return boom } },
			act:       func(s *served) { s.srv.Kill(ptyshell.ErrTerminated) },
			reason:    ptyshell.ReasonTerminated, code: 137, closeCode: 4002},
		{name: "AuditUnavailable", opts: ptyshell.ServeOptions{Running: func(context.Context) error { return boom }},
			reason: ptyshell.ReasonError, code: 129, closeCode: 1011, fatal: ptyshell.ErrorAuditUnavailable},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := serve(t, c.opts, c.configure)
			s.running(t)
			if c.act != nil {
				c.act(s)
			}
			tr, _ := s.ended(t, c.reason, c.code, c.closeCode)
			if c.fatal == "" {
				require.Empty(t, tr.Errors)
				return
			}
			require.Len(t, tr.Errors, 1)
			require.Equal(t, c.fatal, tr.Errors[0].Code)
			require.True(t, tr.Errors[0].Fatal)
			require.Equal(t, ptyshell.FrameError, tr.Frames[len(tr.Frames)-2].Type, "the fatal ERROR comes right before EXIT")
		})
	}
}

func TestServeStartFailures(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		opts  ptyshell.ServeOptions
		start func(ctx context.Context, release <-chan struct{}) error
		fatal string
	}{
		"StartError": {start: func(context.Context, <-chan struct{}) error { return errors.New("no such image") }, fatal: ptyshell.ErrorRuntime},
		"OpenTimeout": {opts: ptyshell.ServeOptions{OpenTimeout: 50 * time.Millisecond},
			start: func(ctx context.Context, _ <-chan struct{}) error { <-ctx.Done(); return ctx.Err() }, fatal: ptyshell.ErrorOpenTimeout},
		"OpenTimeoutIgnoringContext": {opts: ptyshell.ServeOptions{OpenTimeout: 50 * time.Millisecond},
			start: func(_ context.Context, release <-chan struct{}) error { <-release; return nil }, fatal: ptyshell.ErrorOpenTimeout},
		// ^ Close still unblocks it, as the Stream contract requires.
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			s := serve(t, c.opts, func(st *ptyshelltest.Stream) {
				st.StartFunc = func(ctx context.Context) error {
					stop := make(chan struct{})
					go func() {
						select {
						case <-release:
						case <-st.Closed():
						}
						close(stop)
					}()
					return c.start(ctx, stop)
				}
			})
			tr, res := s.ended(t, ptyshell.ReasonError, ptyshell.ExitCodeRuntime, websocket.CloseInternalServerErr)
			close(release)
			require.Equal(t, []ptyshell.FrameType{ptyshell.FrameStatus, ptyshell.FrameError, ptyshell.FrameExit}, tr.Types())
			require.Equal(t, c.fatal, tr.Errors[0].Code)
			require.False(t, res.Running)
			require.Error(t, res.Err)
		})
	}
}

// TestServeEndingsWithoutExit: when the client is gone there is nobody to
// send EXIT to; the teardown still runs once.
func TestServeEndingsWithoutExit(t *testing.T) {
	t.Parallel()
	t.Run("ClientClose", func(t *testing.T) {
		t.Parallel()
		s := serve(t, ptyshell.ServeOptions{}, nil)
		s.running(t)
		require.NoError(t, s.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "")))
		tr := s.conn.Collect()
		require.Zero(t, tr.Exits)
		s.gone(t, ptyshell.ReasonClientClosed)
	})
	t.Run("TCPDrop", func(t *testing.T) {
		t.Parallel()
		s := serve(t, ptyshell.ServeOptions{}, nil)
		s.running(t)
		require.NoError(t, s.conn.NetConn().Close())
		s.gone(t, ptyshell.ReasonClientGone)
	})
	t.Run("PongTimeout", func(t *testing.T) {
		t.Parallel()
		// The client never reads, so it never answers a ping.
		s := serve(t, ptyshell.ServeOptions{PingInterval: 20 * time.Millisecond, PongWait: 200 * time.Millisecond}, nil)
		res := s.gone(t, ptyshell.ReasonClientGone)
		require.Error(t, res.Err)
	})
	t.Run("MessageTooBig", func(t *testing.T) {
		t.Parallel()
		s := serve(t, ptyshell.ServeOptions{}, nil)
		s.running(t)
		require.NoError(t, s.conn.SendInput(make([]byte, 65<<10)))
		tr := s.conn.Collect()
		require.Zero(t, tr.Exits)
		require.Equal(t, websocket.CloseMessageTooBig, tr.CloseCode)
		s.gone(t, ptyshell.ReasonClientGone)
		require.Empty(t, s.stream.Input(), "nothing of the oversized message reaches the shell")
	})
	t.Run("ClientGoneDuringStart", func(t *testing.T) {
		t.Parallel()
		s := serve(t, ptyshell.ServeOptions{}, func(st *ptyshelltest.Stream) {
			st.StartFunc = func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		})
		f, err := s.conn.Next()
		require.NoError(t, err)
		require.Equal(t, ptyshell.FrameStatus, f.Type)
		require.NoError(t, s.conn.NetConn().Close())
		res := s.gone(t, ptyshell.ReasonClientGone)
		require.False(t, res.Running)
	})
}

func TestServeIgnoredFrames(t *testing.T) {
	t.Parallel()
	s := serve(t, ptyshell.ServeOptions{}, func(st *ptyshelltest.Stream) { st.Echo = true })
	s.running(t)
	require.NoError(t, s.conn.WriteMessage(websocket.BinaryMessage, nil))                  // zero-length
	require.NoError(t, s.conn.SendFrame(0x7f, []byte("from the future")))                  // unknown type
	require.NoError(t, s.conn.SendFrame(ptyshell.FrameSignal, []byte(`{"signal":"INT"}`))) // reserved
	require.NoError(t, s.conn.SendFrame(ptyshell.FrameSignal, []byte(`not even json`)))    // reserved, unparsed
	require.NoError(t, s.conn.SendInput(nil))                                              // empty INPUT
	s.echo(t, "still here\r")
	s.srv.Kill(ptyshell.ErrTerminated)
	_, res := s.ended(t, ptyshell.ReasonTerminated, 129, 4002)
	require.EqualValues(t, 1, res.UnknownFrames)
	require.Equal(t, "still here\r", string(s.stream.Input()))
}

func TestServeIdle(t *testing.T) {
	t.Parallel()
	clock := ptyshelltest.NewClock(time.Unix(1e9, 0))
	var inputs int
	// Pings flow all along and never count as activity.
	s := serve(t, ptyshell.ServeOptions{Clock: clock, IdleTimeout: 30 * time.Minute, IdleWarning: time.Minute,
		PingInterval: 10 * time.Millisecond, OnInput: func(time.Time, int) { inputs++ }},
		func(st *ptyshelltest.Stream) { st.Echo = true })
	s.running(t)
	for i := range 10 { // input every 20 minutes keeps it alive, with no warning
		clock.Advance(20 * time.Minute)
		s.echo(t, fmt.Sprintf("k%d;", i))
	}
	clock.Advance(29 * time.Minute)
	f, _, err := s.conn.NextOfType(ptyshell.FrameNotice)
	require.NoError(t, err)
	require.JSONEq(t, `{"code":"idle_warning","seconds_left":60}`, string(f.Payload))

	s.echo(t, "back;") // input re-arms the warning
	clock.Advance(29*time.Minute + 30*time.Second)
	f, _, err = s.conn.NextOfType(ptyshell.FrameNotice)
	require.NoError(t, err)
	require.JSONEq(t, `{"code":"idle_warning","seconds_left":30}`, string(f.Payload))
	clock.Advance(30 * time.Second)
	tr, _ := s.ended(t, ptyshell.ReasonIdleTimeout, 129, ptyshell.CloseIdleTimeout)
	require.Empty(t, tr.Notices, "one warning per idle period")
	require.Equal(t, "closed after 30 minutes without input", tr.Exit.Message)
	require.Equal(t, 11, inputs)
}

func TestServeIdleDisabled(t *testing.T) {
	t.Parallel()
	clock := ptyshelltest.NewClock(time.Unix(1e9, 0))
	s := serve(t, ptyshell.ServeOptions{Clock: clock, MaxLifetime: 48 * time.Hour}, func(st *ptyshelltest.Stream) { st.Echo = true })
	s.running(t)
	clock.Advance(24 * time.Hour)
	s.echo(t, "awake?\r") // anything sent before the echo would fail the read
	s.srv.Kill(ptyshell.ErrTerminated)
	s.ended(t, ptyshell.ReasonTerminated, 129, 4002)
}

func TestServeLifetime(t *testing.T) {
	t.Parallel()
	clock := ptyshelltest.NewClock(time.Unix(1e9, 0))
	s := serve(t, ptyshell.ServeOptions{Clock: clock, IdleTimeout: 30 * time.Minute, MaxLifetime: 8 * time.Hour},
		func(st *ptyshelltest.Stream) { st.Echo = true })
	s.running(t)
	for i := range 23 { // steady input up to 7 h 40 min
		clock.Advance(20 * time.Minute)
		s.echo(t, fmt.Sprintf("k%d;", i))
	}
	clock.Advance(15 * time.Minute)
	f, _, err := s.conn.NextOfType(ptyshell.FrameNotice)
	require.NoError(t, err)
	require.JSONEq(t, `{"code":"lifetime_warning","seconds_left":300}`, string(f.Payload))
	s.echo(t, "more;") // input does not extend the lifetime
	clock.Advance(5 * time.Minute)
	tr, _ := s.ended(t, ptyshell.ReasonMaxLifetime, 129, ptyshell.CloseMaxLifetime)
	require.Empty(t, tr.Notices)
	require.Equal(t, "closed after reaching the maximum lifetime of 8 hours", tr.Exit.Message)
}

func TestServeResize(t *testing.T) {
	t.Parallel()
	handshake := ptyshell.Size{Cols: 120, Rows: 40}
	applied := func(s *served, want ...ptyshell.Size) func() bool {
		return func() bool {
			got := s.stream.Resizes()
			return len(got) >= len(want) && slices.Equal(got[len(got)-len(want):], want)
		}
	}

	t.Run("Debounced", func(t *testing.T) {
		t.Parallel()
		clock := ptyshelltest.NewClock(time.Unix(1e9, 0))
		s := serve(t, ptyshell.ServeOptions{Clock: clock, Size: handshake}, func(st *ptyshelltest.Stream) { st.Echo = true })
		s.running(t)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, handshake)))
		final := ptyshell.Size{Cols: 100, Rows: 30}
		for i := range 100 {
			require.NoError(t, s.conn.SendResize(ptyshell.Size{Cols: 1 + i, Rows: 30}))
		}
		s.echo(t, "x") // every RESIZE before it has been read
		clock.Advance(ptyshell.ResizeInterval)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, final)))
		require.LessOrEqual(t, len(s.stream.Resizes()), 3, "a burst causes only a few applies")
	})
	t.Run("Clamped", func(t *testing.T) {
		t.Parallel()
		clock := ptyshelltest.NewClock(time.Unix(1e9, 0))
		s := serve(t, ptyshell.ServeOptions{Clock: clock, Size: handshake}, nil)
		s.running(t)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, handshake)))
		require.NoError(t, s.conn.SendResize(ptyshell.Size{Cols: 0, Rows: 5000}))
		clock.Advance(ptyshell.ResizeInterval)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, ptyshell.Size{Cols: 1, Rows: 1000})))
		require.NoError(t, s.conn.SendResize(ptyshell.Size{Cols: -4, Rows: -4}))
		clock.Advance(ptyshell.ResizeInterval)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, ptyshell.Size{Cols: 1, Rows: 1})))
	})
	t.Run("FirstRetried", func(t *testing.T) {
		t.Parallel()
		s := serve(t, ptyshell.ServeOptions{Size: handshake}, func(st *ptyshelltest.Stream) { st.FailResizes = 3; st.Echo = true })
		s.running(t)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, handshake)))
		require.Equal(t, 4, s.stream.ResizeCalls())
		s.echo(t, "ok") // no ERROR frame before it
	})
	t.Run("FailureNotFatal", func(t *testing.T) {
		t.Parallel()
		s := serve(t, ptyshell.ServeOptions{Size: handshake}, func(st *ptyshelltest.Stream) { st.FailResizes = 1000; st.Echo = true })
		s.running(t)
		f, _, err := s.conn.NextOfType(ptyshell.FrameError)
		require.NoError(t, err)
		var e ptyshell.ErrorInfo
		require.NoError(t, ptyshell.DecodeControl(f.Payload, &e))
		require.Equal(t, ptyshell.ErrorInfo{Code: ptyshell.ErrorResizeFailed, Message: e.Message, Fatal: false}, e)
		require.Equal(t, 10, s.stream.ResizeCalls(), "ten tries")
		s.echo(t, "alive")
		s.stream.Exit(0)
		s.ended(t, ptyshell.ReasonExited, 0, 1000)
	})
	t.Run("BeforeStart", func(t *testing.T) {
		t.Parallel()
		release, seen := make(chan struct{}), make(chan struct{}, 1)
		onInput := func(time.Time, int) { seen <- struct{}{} }
		s := serve(t, ptyshell.ServeOptions{Size: handshake, OnInput: onInput}, func(st *ptyshelltest.Stream) {
			st.StartFunc = func(context.Context) error { <-release; return nil }
		})
		early := ptyshell.Size{Cols: 90, Rows: 20}
		require.NoError(t, s.conn.SendResize(early))
		require.NoError(t, s.conn.SendInput([]byte("sync"))) // read after the RESIZE
		<-seen
		close(release)
		s.running(t)
		require.NoError(t, s.stream.WaitUntil(ctxT(t), applied(s, early)))
		require.Equal(t, []ptyshell.Size{early}, s.stream.Resizes(), "the handshake size is superseded")
	})
}

// TestServeEarlyInput: INPUT sent before "running" reaches the stream
// after start, in order.
func TestServeEarlyInput(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	s := serve(t, ptyshell.ServeOptions{}, func(st *ptyshelltest.Stream) {
		st.StartFunc = func(context.Context) error { <-release; return nil }
	})
	for i := range 5 {
		require.NoError(t, s.conn.SendInput(fmt.Appendf(nil, "early%d;", i)))
	}
	close(release)
	s.running(t)
	want := "early0;early1;early2;early3;early4;"
	require.NoError(t, s.stream.WaitUntil(ctxT(t), func() bool { return string(s.stream.Input()) == want }))
	require.False(t, s.stream.EarlyInput())
}

// TestServeBackPressure: a client that stops reading blocks the process's
// output once the queue is full; memory stays bounded, input still flows,
// the write deadline ends the session and the teardown runs once.
func TestServeBackPressure(t *testing.T) {
	t.Parallel()
	flooded := make(chan struct{})
	s := serve(t, ptyshell.ServeOptions{WriteWait: 300 * time.Millisecond}, func(st *ptyshelltest.Stream) {
		st.StartFunc = func(context.Context) error {
			go func() {
				defer close(flooded)
				chunk := bytes.Repeat([]byte("y\r\n"), 10<<10)
				for st.Print(chunk) == nil {
				}
			}()
			return nil
		}
	})
	require.NoError(t, s.conn.SendInput([]byte{0x03})) // Ctrl-C travels on its own path
	require.NoError(t, s.stream.WaitUntil(ctxT(t), func() bool { return bytes.Equal(s.stream.Input(), []byte{0x03}) }))
	res := s.gone(t, ptyshell.ReasonClientGone)
	<-flooded
	inFlight := s.stream.ReadBytes() - res.BytesOut
	require.LessOrEqual(t, inFlight, int64(66*ptyshell.MaxDataPayload), "read from the process but never written: the queue and the two frames in hand")
	require.Positive(t, res.BytesOut)
}

// TestServeSlowReader: output through a client that reads slower than the
// process writes arrives complete and in order.
func TestServeSlowReader(t *testing.T) {
	t.Parallel()
	out := pattern(4 << 20)
	s := serve(t, ptyshell.ServeOptions{}, func(st *ptyshelltest.Stream) {
		st.StartFunc = func(context.Context) error {
			go func() { _ = st.Print(out); st.Exit(0) }() // Print fails only if the session ended
			return nil
		}
	})
	var got []byte
	for {
		f, err := s.conn.Next()
		require.NoError(t, err)
		if f.Type == ptyshell.FrameExit {
			break
		}
		if f.Type == ptyshell.FrameOutput {
			got = append(got, f.Payload...)
			// The reader is the slow side: it re-checks what it has so far.
			require.True(t, bytes.HasPrefix(out, got))
		}
	}
	require.Equal(t, len(out), len(got))
	s.endedAfterExit(t)
}

// endedAfterExit finishes a session whose EXIT the test has already read.
func (s *served) endedAfterExit(t *testing.T) {
	t.Helper()
	tr := s.conn.Collect()
	require.Empty(t, tr.Frames)
	require.Equal(t, 1000, tr.CloseCode)
	require.Equal(t, ptyshell.ReasonExited, s.srv.Result(t).Reason)
	require.Equal(t, 1, s.stream.Closes())
}
