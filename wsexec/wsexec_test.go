package wsexec_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/wsexec"
)

// catProcess is a fake command: cat, then "bye" on stderr and an exit
// code, once stdin ended; or, with hold, it never reads stdin and ends
// only when stopped.
type catProcess struct {
	code   int
	hold   bool
	pr     *io.PipeReader
	pw     *io.PipeWriter
	exited chan struct{}
	once   sync.Once
	closes atomic.Int32
	stops  atomic.Int32
	// signals receives each signal delivered, when set.
	signals chan string
}

func newCat(code int) *catProcess {
	pr, pw := io.Pipe()
	return &catProcess{code: code, pr: pr, pw: pw, exited: make(chan struct{})}
}

func (p *catProcess) Start(context.Context) error { return nil }

func (p *catProcess) Output(stdout, stderr io.Writer) error {
	if p.hold {
		<-p.exited
		return nil
	}
	defer p.end()
	if _, err := io.Copy(stdout, p.pr); err != nil {
		return err
	}
	_, err := io.WriteString(stderr, "bye")
	return err
}

func (p *catProcess) end() { p.once.Do(func() { close(p.exited) }) }

func (p *catProcess) Write(b []byte) (int, error) { return p.pw.Write(b) }
func (p *catProcess) CloseStdin() error           { return p.pw.Close() }

func (p *catProcess) Wait(ctx context.Context) (wsexec.ExitStatus, error) {
	select {
	case <-p.exited:
		if p.stops.Load() > 0 {
			return wsexec.ExitStatus{Code: 143}, nil
		}
		return wsexec.ExitStatus{Code: p.code}, nil
	case <-ctx.Done():
		return wsexec.ExitStatus{}, ctx.Err()
	}
}

func (p *catProcess) Stop(context.Context) error {
	p.stops.Add(1)
	p.pr.CloseWithError(errors.New("stopped"))
	p.end()
	return nil
}

func (p *catProcess) Signal(_ context.Context, name string) error {
	if p.signals != nil {
		p.signals <- name
	}
	return nil
}

func (p *catProcess) Close() error {
	p.closes.Add(1)
	p.pr.CloseWithError(errors.New("closed"))
	p.end()
	return nil
}

// serve runs Serve over proc behind an httptest server and returns the
// ws URL and the result, once Serve returned.
func serve(t *testing.T, proc wsexec.Process, o wsexec.ServeOptions) (string, <-chan wsexec.ServeResult) {
	t.Helper()
	results := make(chan wsexec.ServeResult, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{Subprotocols: []string{wsexec.Subprotocol}}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		// Serve's ctx is the server's life, as the service gives it: the
		// request's context ends when the client goes (net/http cancels it
		// on a read error through the hijacked reader), which is no
		// shutdown.
		results <- wsexec.Serve(context.WithoutCancel(r.Context()), conn, proc, o)
	}))
	t.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http"), results
}

func dial(t *testing.T, url string) *websocket.Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{wsexec.Subprotocol}}
	conn, resp, err := d.DialContext(t.Context(), url, nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, wsexec.Subprotocol, conn.Subprotocol())
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func result(t *testing.T, results <-chan wsexec.ServeResult) wsexec.ServeResult {
	t.Helper()
	select {
	case r := <-results:
		return r
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return")
		return wsexec.ServeResult{}
	}
}

func TestRunCat(t *testing.T) {
	t.Parallel()
	proc := newCat(7)
	url, results := serve(t, proc, wsexec.ServeOptions{})
	in := make([]byte, 5<<20+17)
	_, _ = rand.Read(in)
	var out, errOut bytes.Buffer
	st, err := wsexec.Run(t.Context(), dial(t, url), bytes.NewReader(in), &out, &errOut, wsexec.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, wsexec.Status{ExitCode: 7, Reason: wsexec.ReasonExited, Message: "the command exited with status 7"}, st)
	require.Equal(t, int32(1), proc.closes.Load(), "the teardown comes before the status, so the client finds the volume free")
	require.True(t, bytes.Equal(in, out.Bytes()), "stdout is stdin, byte for byte (%d of %d bytes)", out.Len(), len(in))
	require.Equal(t, "bye", errOut.String())
	res := result(t, results)
	require.Equal(t, wsexec.ReasonExited, res.Reason)
	require.Equal(t, int64(len(in)), res.BytesIn)
	require.Equal(t, int64(len(in)+3), res.BytesOut)
	require.Equal(t, int32(1), proc.closes.Load())
}

func TestRunNilStdinHalfClosesAtOnce(t *testing.T) {
	t.Parallel()
	url, results := serve(t, newCat(0), wsexec.ServeOptions{})
	st, err := wsexec.Run(t.Context(), dial(t, url), nil, io.Discard, io.Discard, wsexec.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, 0, st.ExitCode)
	require.Equal(t, wsexec.ReasonExited, result(t, results).Reason)
}

func TestServeClientGone(t *testing.T) {
	t.Parallel()
	proc := newCat(0)
	proc.hold = true
	url, results := serve(t, proc, wsexec.ServeOptions{})
	conn := dial(t, url)
	require.NoError(t, conn.NetConn().Close()) // no close frame
	res := result(t, results)
	require.Equal(t, wsexec.ReasonClientGone, res.Reason)
	require.Equal(t, int32(1), proc.stops.Load())
	require.Equal(t, int32(1), proc.closes.Load())
}

func TestServeClientClosed(t *testing.T) {
	t.Parallel()
	proc := newCat(0)
	proc.hold = true
	url, results := serve(t, proc, wsexec.ServeOptions{})
	conn := dial(t, url)
	require.NoError(t, conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, "")))
	require.Equal(t, wsexec.ReasonClientClosed, result(t, results).Reason)
	require.Equal(t, int32(1), proc.closes.Load())
}

// statusOf reads a raw connection to its status and close code.
func statusOf(t *testing.T, conn *websocket.Conn) (wsexec.Status, int) {
	t.Helper()
	var st wsexec.Status
	for {
		_, msg, err := conn.ReadMessage()
		if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
			return st, ce.Code
		}
		require.NoError(t, err)
		if msg[0] == wsexec.ChannelStatus {
			require.NoError(t, jsonUnmarshal(msg[1:], &st))
		}
	}
}

func TestServeProtocolErrors(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		typ  int
		msg  []byte
		code int
	}{
		"TextFrame":        {websocket.TextMessage, []byte("hi"), websocket.CloseUnsupportedData},
		"StdinAfterClose":  {websocket.BinaryMessage, []byte{wsexec.ChannelClose, 0, 0xFE}, websocket.ClosePolicyViolation},
		"CloseWithoutByte": {websocket.BinaryMessage, []byte{wsexec.ChannelClose}, websocket.ClosePolicyViolation},
		"UnknownSignal":    {websocket.BinaryMessage, []byte{wsexec.ChannelSignal, 'S', 'E', 'G', 'V'}, websocket.ClosePolicyViolation},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			proc := newCat(0)
			proc.hold = true
			url, results := serve(t, proc, wsexec.ServeOptions{})
			conn := dial(t, url)
			if name == "StdinAfterClose" {
				require.NoError(t, conn.WriteMessage(websocket.BinaryMessage, []byte{wsexec.ChannelClose, wsexec.ChannelStdin}))
				c.msg = []byte{wsexec.ChannelStdin, 'x'}
			}
			require.NoError(t, conn.WriteMessage(c.typ, c.msg))
			st, code := statusOf(t, conn)
			require.Equal(t, wsexec.ReasonProtocolError, st.Reason)
			require.Equal(t, c.code, code)
			require.Equal(t, wsexec.ReasonProtocolError, result(t, results).Reason)
		})
	}
}

func TestServeLifetimeAndTermination(t *testing.T) {
	t.Parallel()
	t.Run("MaxLifetime", func(t *testing.T) {
		t.Parallel()
		proc := newCat(0)
		proc.hold = true
		url, results := serve(t, proc, wsexec.ServeOptions{MaxLifetime: 100 * time.Millisecond})
		st, code := statusOf(t, dial(t, url))
		require.Equal(t, wsexec.ReasonMaxLifetime, st.Reason)
		require.Equal(t, 143, st.ExitCode)
		require.Equal(t, 4001, code)
		require.Equal(t, wsexec.ReasonMaxLifetime, result(t, results).Reason)
	})
	t.Run("StartingRefused", func(t *testing.T) {
		t.Parallel()
		proc := newCat(0)
		url, results := serve(t, proc, wsexec.ServeOptions{Starting: func(context.Context) error { return errors.New("no audit") }})
		st, err := wsexec.Run(t.Context(), dial(t, url), nil, nil, nil, wsexec.RunOptions{})
		require.NoError(t, err)
		require.Equal(t, wsexec.ReasonError, st.Reason)
		require.Equal(t, wsexec.ExitCodeRuntime, st.ExitCode)
		res := result(t, results)
		require.False(t, res.Started)
		require.Equal(t, int32(1), proc.closes.Load())
	})
}

func TestRunConnectionLost(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := websocket.Upgrader{Subprotocols: []string{wsexec.Subprotocol}}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		_ = conn.WriteMessage(websocket.BinaryMessage, []byte{wsexec.ChannelStdout, 'h', 'i'})
		_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""))
		_ = conn.Close()
	}))
	t.Cleanup(srv.Close)
	var out bytes.Buffer
	_, err := wsexec.Run(t.Context(), dial(t, "ws"+strings.TrimPrefix(srv.URL, "http")), nil, &out, nil, wsexec.RunOptions{})
	require.ErrorIs(t, err, wsexec.ErrConnectionLost, "a close without a status is never status 0")
	require.Equal(t, "hi", out.String())
}

func TestArgv(t *testing.T) {
	t.Parallel()
	long := make([]string, wsexec.MaxArgs+1)
	for i := range long {
		long[i] = "a"
	}
	for name, c := range map[string]struct {
		argv []string
		ok   bool
	}{
		"OK":            {[]string{"sh", "-c", "echo 'a b' \"$x\"\n; exit 7", "ünï", ""}, true},
		"ErrEmpty":      {nil, false},
		"ErrEmptyName":  {[]string{"", "x"}, false},
		"ErrNUL":        {[]string{"echo", "a\x00b"}, false},
		"ErrBadUTF8":    {[]string{"echo", "\xff"}, false},
		"ErrTooMany":    {long, false},
		"ErrTooLong":    {[]string{"echo", strings.Repeat("x", wsexec.MaxArgvBytes)}, false},
		"OKMaxArgCount": {long[:wsexec.MaxArgs], true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			v, err := wsexec.EncodeArgv(c.argv)
			if !c.ok {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			got, err := wsexec.DecodeArgv(v)
			require.NoError(t, err)
			require.Equal(t, c.argv, got)
		})
	}
	for name, v := range map[string]string{
		"ErrMissing": "", "ErrNotBase64": "!!", "ErrNotArray": "eyJhIjoxfQ", "ErrNumbers": "WzEsMl0", "ErrEmptyArray": "W10",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := wsexec.DecodeArgv(v)
			require.Error(t, err)
		})
	}
}

// lostEngine is a command whose runtime dies under it: its wait fails with
// the engine client's own text, which names the host's socket.
type lostEngine struct{ *catProcess }

func (p lostEngine) Wait(context.Context) (wsexec.ExitStatus, error) {
	p.end()
	return wsexec.ExitStatus{}, errors.New(`wait: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.41/containers/x/json": connection reset by peer`)
}

func TestServeRuntimeFailureKeepsItsCauseFromTheClient(t *testing.T) {
	t.Parallel()
	url, results := serve(t, lostEngine{newCat(0)}, wsexec.ServeOptions{})
	st, err := wsexec.Run(t.Context(), dial(t, url), nil, io.Discard, io.Discard, wsexec.RunOptions{})
	require.NoError(t, err)
	require.Equal(t, wsexec.Status{ExitCode: wsexec.ExitCodeRuntime, Reason: wsexec.ReasonError,
		Message: "the command's exit status could not be read"}, st)
	res := result(t, results)
	require.ErrorContains(t, res.Err, "docker.sock", "the cause stays in the result, for the log")
}
