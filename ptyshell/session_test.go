package ptyshell_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// dialSession opens a Session to url.
func dialSession(t *testing.T, url string, opts ptyshell.SessionOptions) *ptyshell.Session {
	t.Helper()
	s, err := ptyshell.NewSession(ptyshelltest.Dial(t, url).Conn, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() }) // idempotent
	return s
}

// drain takes every message until the session's end error.
func drain(t *testing.T, s *ptyshell.Session) ([]ptyshell.Message, error) {
	t.Helper()
	var ms []ptyshell.Message
	for {
		m, err := s.Next(ctxT(t))
		if err != nil {
			return ms, err
		}
		ms = append(ms, m)
	}
}

func output(ms []ptyshell.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.Write(m.Output)
	}
	return b.String()
}

func TestSessionEndings(t *testing.T) {
	t.Parallel()
	exit := ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited, Message: "the shell exited with status 3"}
	reset := func(c *websocket.Conn) {
		tcp := c.NetConn().(*net.TCPConn)
		_ = tcp.SetLinger(0) // close sends RST
		_ = tcp.Close()
	}
	cases := map[string]struct {
		script func(c *websocket.Conn)
		ending ptyshell.Ending
		status int
	}{
		"Exit": {script: func(c *websocket.Conn) {
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("bye\r\n"))
			_ = ptyshelltest.WriteExit(c, exit)
			_, _, _ = c.ReadMessage() // the client's answer to the close
		}, ending: ptyshell.EndExit, status: 3},
		"ExitThenReset": {script: func(c *websocket.Conn) {
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("bye\r\n"))
			_ = ptyshelltest.WriteControl(c, ptyshell.FrameExit, exit)
			reset(c)
		}, ending: ptyshell.EndExit, status: 3},
		"Close1000WithoutExit": {script: func(c *websocket.Conn) {
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("bye\r\n"))
			_ = c.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(1000, ""))
			_, _, _ = c.ReadMessage()
		}, ending: ptyshell.EndLost, status: 255},
		"Reset": {script: func(c *websocket.Conn) {
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("bye\r\n"))
			reset(c)
		}, ending: ptyshell.EndLost, status: 255},
		"MalformedExit": {script: func(c *websocket.Conn) {
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("bye\r\n"))
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameExit, []byte(`{"exit_code":"zero"}`))
			_, _, err := c.ReadMessage()
			if ce, ok := errors.AsType[*websocket.CloseError](err); !ok || ce.Code != websocket.CloseProtocolError {
				panic("want close 1002, got " + err.Error())
			}
		}, ending: ptyshell.EndLost, status: 255},
		"TextFrame": {script: func(c *websocket.Conn) {
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("bye\r\n"))
			_ = c.WriteMessage(websocket.TextMessage, []byte("{}"))
			_, _, _ = c.ReadMessage()
		}, ending: ptyshell.EndLost, status: 255},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := dialSession(t, ptyshelltest.ScriptServer(t, nil, c.script), ptyshell.SessionOptions{})
			ms, err := drain(t, s)
			require.Equal(t, "bye\r\n", output(ms))
			res := s.Result()
			require.Equal(t, c.ending, res.Ending)
			require.Equal(t, c.status, res.ExitStatus())
			if c.ending == ptyshell.EndExit {
				require.ErrorIs(t, err, io.EOF)
				require.Equal(t, exit, res.Exit)
				require.Equal(t, ptyshell.FrameExit, ms[len(ms)-1].Type)
				require.Equal(t, "[cairn: shell exited with status 3]", res.Summary())
				return
			}
			require.ErrorIs(t, err, ptyshell.ErrConnectionLost)
			var lost *ptyshell.LostError
			require.ErrorAs(t, err, &lost)
			require.Error(t, res.Err)
			require.Equal(t, "[cairn: connection lost — the shell was probably ended]", res.Summary())
		})
	}
}

func TestSessionSubprotocol(t *testing.T) {
	t.Parallel()
	for name, offered := range map[string][]string{"None": {}, "Other": {"cairn.ptyshell.v0"}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			closed := make(chan int, 1)
			url := ptyshelltest.ScriptServer(t, offered, func(c *websocket.Conn) {
				_, _, err := c.ReadMessage()
				code := -1
				if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
					code = ce.Code
				}
				closed <- code
			})
			d := websocket.Dialer{Subprotocols: append([]string{ptyshell.Subprotocol}, offered...)}
			conn, resp, err := d.Dial(url, nil)
			require.NoError(t, err)
			require.NoError(t, resp.Body.Close())
			_, err = ptyshell.NewSession(conn, ptyshell.SessionOptions{})
			require.ErrorIs(t, err, ptyshell.ErrUnsupportedProtocol)
			require.Contains(t, err.Error(), "unsupported shell protocol")
			require.Equal(t, websocket.CloseProtocolError, <-closed)
		})
	}
}

func TestSessionUnknownFramesIgnored(t *testing.T) {
	t.Parallel()
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		_ = ptyshelltest.WriteFrame(c, 0x7f, []byte("from the future"))
		_ = c.WriteMessage(websocket.BinaryMessage, nil)
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("after"))
		_ = ptyshelltest.WriteControl(c, ptyshell.FrameNotice, ptyshell.Notice{Code: ptyshell.NoticeIdleWarning, SecondsLeft: 60})
		_ = ptyshelltest.WriteExit(c, ptyshell.Exit{ExitCode: 129, Reason: ptyshell.ReasonIdleTimeout, Message: "m"})
		_, _, _ = c.ReadMessage()
	})
	s := dialSession(t, url, ptyshell.SessionOptions{})
	ms, err := drain(t, s)
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, ms, 3)
	require.Equal(t, "after", string(ms[0].Output))
	require.Equal(t, ptyshell.Notice{Code: ptyshell.NoticeIdleWarning, SecondsLeft: 60}, *ms[1].Notice)
	require.EqualValues(t, 1, s.UnknownFrames())
	res := s.Result()
	require.Equal(t, 129, res.ExitStatus())
	require.Equal(t, "[cairn: shell ended: idle timeout (status 129); warned 1 min before]", res.Summary())
}

// TestSessionWrite: a 1 MiB paste becomes INPUT frames of at most 32 KiB,
// in order and byte-identical; RESIZE is clamped.
func TestSessionWrite(t *testing.T) {
	t.Parallel()
	paste := pattern(1 << 20)
	got := make(chan []ptyshell.Frame, 1)
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		var frames []ptyshell.Frame
		defer func() { got <- frames }()
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			f, _ := ptyshell.DecodeFrame(msg)
			frames = append(frames, f)
			if f.Type == ptyshell.FrameResize {
				_ = ptyshelltest.WriteExit(c, ptyshell.Exit{Reason: ptyshell.ReasonExited})
			}
		}
	})
	s := dialSession(t, url, ptyshell.SessionOptions{})
	n, err := s.Write(paste)
	require.NoError(t, err)
	require.Equal(t, len(paste), n)
	require.NoError(t, s.Resize(ptyshell.Size{Cols: 5000, Rows: 0}))
	_, err = drain(t, s)
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, s.Close())

	frames := <-got
	var input []byte
	for _, f := range frames[:len(frames)-1] {
		require.Equal(t, ptyshell.FrameInput, f.Type)
		require.LessOrEqual(t, len(f.Payload), ptyshell.MaxDataPayload)
		input = append(input, f.Payload...)
	}
	require.True(t, bytes.Equal(paste, input))
	last := frames[len(frames)-1]
	require.Equal(t, ptyshell.FrameResize, last.Type)
	size, err := ptyshell.ParseResize(last.Payload)
	require.NoError(t, err)
	require.Equal(t, ptyshell.Size{Cols: 1000, Rows: 1}, size)
}

func TestSessionClose(t *testing.T) {
	t.Parallel()
	closed := make(chan int, 1)
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
		_, _, err := c.ReadMessage()
		code := -1
		if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
			code = ce.Code
		}
		closed <- code
	})
	s := dialSession(t, url, ptyshell.SessionOptions{})
	m, err := s.Next(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, "prompt$ ", string(m.Output))
	require.NoError(t, s.Close())
	require.Equal(t, websocket.CloseNormalClosure, <-closed)
	_, err = s.Next(ctxT(t))
	require.ErrorIs(t, err, io.EOF)
	_, err = s.Write([]byte("x"))
	require.ErrorIs(t, err, ptyshell.ErrSessionClosed)
	res := s.Result()
	require.Equal(t, ptyshell.EndDetach, res.Ending)
	require.Equal(t, 0, res.ExitStatus())
	require.NoError(t, s.Close(), "idempotent")
}

// TestSessionKeepalive: a server that goes silent, answering no ping, is
// dropped after PongWait.
func TestSessionKeepalive(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) { <-release })
	s := dialSession(t, url, ptyshell.SessionOptions{PingInterval: 20 * time.Millisecond, PongWait: 200 * time.Millisecond})
	_, err := drain(t, s)
	close(release)
	require.ErrorIs(t, err, ptyshell.ErrConnectionLost)
	require.Equal(t, ptyshell.EndLost, s.Result().Ending)
}

// TestSessionAgainstServe runs both halves together.
func TestSessionAgainstServe(t *testing.T) {
	t.Parallel()
	stream := ptyshelltest.NewStream()
	stream.Echo = true
	stream.OnInput = func(st *ptyshelltest.Stream, p []byte) {
		if bytes.Contains(p, []byte("exit 3\r")) {
			st.Exit(3)
		}
	}
	srv := ptyshelltest.NewServer(t, stream, ptyshell.ServeOptions{Status: testStatus, IdleTimeout: 30 * time.Minute})
	s := dialSession(t, srv.URL, ptyshell.SessionOptions{})
	_, err := s.Write([]byte("echo hi\r"))
	require.NoError(t, err)
	_, err = s.Write([]byte("exit 3\r"))
	require.NoError(t, err)
	ms, err := drain(t, s)
	require.ErrorIs(t, err, io.EOF)
	require.Equal(t, ptyshell.FrameStatus, ms[0].Type)
	require.Equal(t, "echo hi\rexit 3\r", output(ms))
	res := s.Result()
	require.Equal(t, ptyshell.EndExit, res.Ending)
	require.Equal(t, 3, res.ExitStatus())
	require.Equal(t, "running", res.Status.State)
	require.Equal(t, 1800, res.Status.IdleTimeoutSecs)
	require.NoError(t, s.Close())
	require.Equal(t, ptyshell.ReasonExited, srv.Result(t).Reason)
}

// TestSessionDetachAgainstServe: the client's close ends the shell on the
// server as client_closed, with one teardown.
func TestSessionDetachAgainstServe(t *testing.T) {
	t.Parallel()
	stream := ptyshelltest.NewStream()
	srv := ptyshelltest.NewServer(t, stream, ptyshell.ServeOptions{Status: testStatus})
	s := dialSession(t, srv.URL, ptyshell.SessionOptions{})
	m, err := s.Next(ctxT(t))
	require.NoError(t, err)
	require.Equal(t, ptyshell.FrameStatus, m.Type)
	require.NoError(t, s.Close())
	require.Equal(t, ptyshell.ReasonClientClosed, srv.Result(t).Reason)
	require.Equal(t, 1, stream.Closes())
}
