package ptyshelltest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// Guard bounds how long a helper waits before failing a test that would
// otherwise hang. It is never a means of synchronisation.
const Guard = 20 * time.Second

// Server runs ptyshell.Serve over the first websocket upgraded by an
// httptest server.
type Server struct {
	// URL is the ws:// address to dial.
	URL     string
	HTTP    *httptest.Server
	cancel  context.CancelCauseFunc
	results chan ptyshell.ServeResult
}

// NewServer starts a Server that serves stream with opts. Cleanup closes it
// and waits for Serve to return.
func NewServer(t testing.TB, stream ptyshell.Stream, opts ptyshell.ServeOptions) *Server {
	t.Helper()
	ctx, cancel := context.WithCancelCause(context.Background())
	s := &Server{cancel: cancel, results: make(chan ptyshell.ServeResult, 1)}
	up := websocket.Upgrader{
		Subprotocols: []string{ptyshell.Subprotocol},
		CheckOrigin:  func(r *http.Request) bool { return r.Header.Get("Origin") == "" },
	}
	served := make(chan struct{}, 1)
	s.HTTP = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case served <- struct{}{}:
		default:
			http.Error(w, "one session per server", http.StatusConflict)
			return
		}
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered
		}
		s.results <- ptyshell.Serve(ctx, conn, stream, opts)
	}))
	s.URL = "ws" + strings.TrimPrefix(s.HTTP.URL, "http")
	t.Cleanup(func() {
		cancel(errors.New("test over"))
		s.HTTP.CloseClientConnections()
		s.HTTP.Close()
	})
	return s
}

// Kill cancels the session's context with cause, as the service's kill and
// shutdown do (ptyshell.ErrTerminated, ptyshell.ErrServerShutdown).
func (s *Server) Kill(cause error) { s.cancel(cause) }

// Result waits for Serve to return and returns its result.
func (s *Server) Result(t testing.TB) ptyshell.ServeResult {
	t.Helper()
	select {
	case r := <-s.results:
		s.results <- r // later calls see it too
		return r
	case <-time.After(Guard):
		t.Fatalf("Serve did not return within %s", Guard)
		return ptyshell.ServeResult{}
	}
}

// Conn is the raw client end of a session: frames, without Session's logic.
type Conn struct {
	*websocket.Conn
}

// Dial opens a websocket to url offering the shell subprotocol. Cleanup
// closes it.
func Dial(t testing.TB, url string) *Conn {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{ptyshell.Subprotocol}, HandshakeTimeout: Guard}
	conn, resp, err := d.Dial(url, nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close() // nothing to read from a 101
	}
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	t.Cleanup(func() { _ = conn.Close() }) // may already be closed
	return &Conn{Conn: conn}
}

// SendFrame writes one binary message of type typ.
func (c *Conn) SendFrame(typ ptyshell.FrameType, payload []byte) error {
	return c.WriteMessage(websocket.BinaryMessage, ptyshell.Frame{Type: typ, Payload: payload}.Encode())
}

// SendInput writes one INPUT frame.
func (c *Conn) SendInput(p []byte) error { return c.SendFrame(ptyshell.FrameInput, p) }

// SendResize writes one RESIZE frame.
func (c *Conn) SendResize(size ptyshell.Size) error {
	msg, err := ptyshell.EncodeControl(ptyshell.FrameResize, size)
	if err != nil {
		return err
	}
	return c.WriteMessage(websocket.BinaryMessage, msg)
}

// Next reads the next message as a frame (within Guard). A text message is
// an error; so is an empty one, which a server never sends.
func (c *Conn) Next() (ptyshell.Frame, error) {
	_ = c.SetReadDeadline(time.Now().Add(Guard)) // a failure shows in the read
	typ, msg, err := c.ReadMessage()
	if err != nil {
		return ptyshell.Frame{}, err
	}
	if typ != websocket.BinaryMessage {
		return ptyshell.Frame{}, fmt.Errorf("message of type %d, want binary", typ)
	}
	return ptyshell.DecodeFrame(msg)
}

// NextOfType reads frames until one of type typ, returning the OUTPUT read
// on the way. Any other frame is an error.
func (c *Conn) NextOfType(typ ptyshell.FrameType) (ptyshell.Frame, []byte, error) {
	var out []byte
	for {
		f, err := c.Next()
		if err != nil {
			return f, out, err
		}
		switch f.Type {
		case typ:
			return f, out, nil
		case ptyshell.FrameOutput:
			out = append(out, f.Payload...)
		default:
			return f, out, fmt.Errorf("frame 0x%02x while waiting for 0x%02x", byte(f.Type), byte(typ))
		}
	}
}

// ReadOutput reads OUTPUT until it has seen want, returning everything
// read. Any other frame is an error.
func (c *Conn) ReadOutput(want string) ([]byte, error) {
	var out []byte
	for !strings.Contains(string(out), want) {
		f, err := c.Next()
		if err != nil {
			return out, err
		}
		if f.Type != ptyshell.FrameOutput {
			return out, fmt.Errorf("frame 0x%02x while waiting for output %q", byte(f.Type), want)
		}
		out = append(out, f.Payload...)
	}
	return out, nil
}

// Transcript is everything a client received until the connection ended.
type Transcript struct {
	Frames []ptyshell.Frame
	// Output is every OUTPUT payload, concatenated.
	Output []byte
	// Statuses, Notices and Errors are the decoded control frames, in order.
	Statuses []ptyshell.Status
	Notices  []ptyshell.Notice
	Errors   []ptyshell.ErrorInfo
	// Exits counts EXIT frames; Exit is the first.
	Exits int
	Exit  ptyshell.Exit
	// AfterExit counts frames of any type that followed the first EXIT.
	AfterExit int
	// CloseCode is the close frame's code, or -1 when the connection ended
	// without one.
	CloseCode int
	Err       error
}

// Collect reads until the connection ends and returns what arrived.
func (c *Conn) Collect() Transcript {
	tr := Transcript{CloseCode: -1}
	for {
		f, err := c.Next()
		if err != nil {
			tr.Err = err
			if ce, ok := errors.AsType[*websocket.CloseError](err); ok {
				tr.CloseCode = ce.Code
			}
			return tr
		}
		tr.add(f)
	}
}

func (tr *Transcript) add(f ptyshell.Frame) {
	tr.Frames = append(tr.Frames, f)
	if tr.Exits > 0 {
		tr.AfterExit++
	}
	switch f.Type {
	case ptyshell.FrameOutput:
		tr.Output = append(tr.Output, f.Payload...)
	case ptyshell.FrameStatus:
		var st ptyshell.Status
		_ = ptyshell.DecodeControl(f.Payload, &st) // a bad payload shows as a zero Status
		tr.Statuses = append(tr.Statuses, st)
	case ptyshell.FrameNotice:
		var n ptyshell.Notice
		_ = ptyshell.DecodeControl(f.Payload, &n) // as above
		tr.Notices = append(tr.Notices, n)
	case ptyshell.FrameError:
		var e ptyshell.ErrorInfo
		_ = ptyshell.DecodeControl(f.Payload, &e) // as above
		tr.Errors = append(tr.Errors, e)
	case ptyshell.FrameExit:
		if tr.Exits == 0 {
			_ = ptyshell.DecodeControl(f.Payload, &tr.Exit) // as above
		}
		tr.Exits++
	}
}

// Types returns the frame types in order, for asserting the sequence.
func (tr Transcript) Types() []ptyshell.FrameType {
	types := make([]ptyshell.FrameType, len(tr.Frames))
	for i, f := range tr.Frames {
		types[i] = f.Type
	}
	return types
}

// Session dials url and returns a ptyshell.Session over it. Cleanup closes
// it.
func Session(t testing.TB, url string) *ptyshell.Session {
	t.Helper()
	s, err := ptyshell.NewSession(Dial(t, url).Conn, ptyshell.SessionOptions{})
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() }) // idempotent
	return s
}
