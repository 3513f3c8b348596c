package ptyshell

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// ErrUnsupportedProtocol is what NewSession returns when the server's 101
// names no subprotocol or another one than Subprotocol.
var ErrUnsupportedProtocol = errors.New("ptyshell: the server speaks an unsupported shell protocol")

// ErrConnectionLost is matched (errors.Is) by the error of a session that
// ended without an EXIT frame: whatever the close code, it never means
// status 0.
var ErrConnectionLost = errors.New("ptyshell: connection lost")

// ErrSessionClosed is what Write and Resize return after Close.
var ErrSessionClosed = errors.New("ptyshell: session closed")

// LostError reports a session that ended without EXIT; Err is the
// transport's error (a *websocket.CloseError, a read error, a timeout).
type LostError struct{ Err error }

func (e *LostError) Error() string {
	if e.Err == nil {
		return ErrConnectionLost.Error()
	}
	return ErrConnectionLost.Error() + ": " + e.Err.Error()
}

func (e *LostError) Unwrap() []error { return []error{ErrConnectionLost, e.Err} }

// SessionOptions configures the client half. Zero values take the defaults
// noted beside each field.
type SessionOptions struct {
	PingInterval time.Duration // 20 s
	PongWait     time.Duration // 60 s: a server silent this long is gone
	WriteWait    time.Duration // 10 s per write
	// CloseWait bounds how long Close waits for the server's answer to its
	// close frame (1 s).
	CloseWait time.Duration
	// Subprotocol is the one the server must have answered: Subprotocol
	// (v1) when empty, SubprotocolV2 for the attach and watch routes.
	Subprotocol string
}

const (
	inQueueFrames      = 64
	sessionOutFrames   = 16
	defaultSessionWait = time.Second
)

// Message is one frame from the server as Session.Next returns it. Type
// says which field is set.
type Message struct {
	Type   FrameType
	Output []byte     // FrameOutput: raw bytes
	Status *Status    // FrameStatus
	Exit   *Exit      // FrameExit: the last message
	Error  *ErrorInfo // FrameError
	Notice *Notice    // FrameNotice
}

// Session is the client half of a shell over an open websocket: it sends
// INPUT and RESIZE, receives the server's frames, answers and sends pings,
// and reports how the session ended. It knows nothing about terminals. It
// reads from the moment it is made, holding frames in a bounded queue until
// Next takes them; while the queue is full it stops reading, which pushes
// back on the server.
//
// Write, Resize, Next and Close may be called from different goroutines.
type Session struct {
	conn *websocket.Conn
	opts SessionOptions

	in         chan Message // reader → Next, closed when the reader ends
	out        chan []byte  // Write/Resize → writer
	closing    chan struct{}
	readerDone chan struct{}
	closeOnce  sync.Once
	wg         sync.WaitGroup
	unknown    atomic.Int64

	mu     sync.Mutex
	result Result
}

// NewSession takes over conn, a websocket dialled with Sec-WebSocket-
// Protocol offering Subprotocol (client.Shell dials it with its own
// headers). If the server did not answer with Subprotocol, NewSession
// closes conn with 1002 and returns an error matching
// ErrUnsupportedProtocol. Otherwise the session owns conn from now on;
// Close releases it.
func NewSession(conn *websocket.Conn, opts SessionOptions) (*Session, error) {
	opts.PingInterval = cmp.Or(opts.PingInterval, DefaultPingInterval)
	opts.PongWait = cmp.Or(opts.PongWait, DefaultPongWait)
	opts.WriteWait = cmp.Or(opts.WriteWait, DefaultWriteWait)
	opts.CloseWait = cmp.Or(opts.CloseWait, defaultSessionWait)
	want := cmp.Or(opts.Subprotocol, Subprotocol)
	if got := conn.Subprotocol(); got != want {
		// Best effort: the connection is dropped either way.
		_ = conn.WriteControl(websocket.CloseMessage,
			websocket.FormatCloseMessage(websocket.CloseProtocolError, "unsupported subprotocol"), time.Now().Add(opts.WriteWait))
		_ = conn.Close()
		return nil, fmt.Errorf("%w (it answered subprotocol %q, want %q)", ErrUnsupportedProtocol, got, want)
	}
	s := &Session{
		conn:       conn,
		opts:       opts,
		in:         make(chan Message, inQueueFrames),
		out:        make(chan []byte, sessionOutFrames),
		closing:    make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	conn.SetReadLimit(ClientReadLimit)
	s.spawn(s.readLoop)
	s.spawn(s.writeLoop)
	s.spawn(s.pingLoop)
	return s, nil
}

func (s *Session) spawn(f func()) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
}

// Write sends p as INPUT, split into frames of at most MaxDataPayload
// bytes, in order. It returns once every frame is queued, blocking while
// the queue is full. After the session ended it returns ErrSessionClosed
// (after Close) or the session's end error.
func (s *Session) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), MaxDataPayload)]
		if err := s.send(Frame{Type: FrameInput, Payload: chunk}.Encode()); err != nil {
			return n, err
		}
		n, p = n+len(chunk), p[len(chunk):]
	}
	return n, nil
}

// Resize sends RESIZE with size clamped to 1–1000. Debouncing is the
// caller's (Terminal does it).
func (s *Session) Resize(size Size) error {
	msg, err := EncodeControl(FrameResize, size.Clamp())
	if err != nil {
		return err
	}
	return s.send(msg)
}

func (s *Session) send(msg []byte) error {
	select {
	case <-s.closing:
		return ErrSessionClosed
	default:
	}
	select {
	case <-s.readerDone:
		return s.endErr()
	default:
	}
	select {
	case s.out <- msg:
		return nil
	case <-s.closing:
		return ErrSessionClosed
	case <-s.readerDone:
		return s.endErr()
	}
}

// Next returns the server's next frame, blocking until one arrives or ctx
// ends. EXIT is returned like any other frame and is the last. Once the
// session is over and every frame was taken, Next returns io.EOF if EXIT
// arrived or the session was closed, and a *LostError (matching
// ErrConnectionLost) if the connection ended without EXIT. Frames of
// unknown type are skipped.
func (s *Session) Next(ctx context.Context) (Message, error) {
	select {
	case m, ok := <-s.in:
		if !ok {
			return Message{}, s.endErr()
		}
		return m, nil
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Done is closed when the connection has ended.
func (s *Session) Done() <-chan struct{} { return s.readerDone }

// Result says how the session ended; its Ending is EndNone while it has
// not. Status holds the last STATUS received, Notices every NOTICE.
func (s *Session) Result() Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.result
	r.Notices = append([]Notice(nil), r.Notices...)
	return r
}

// UnknownFrames counts frames of unknown type that were ignored.
func (s *Session) UnknownFrames() int64 { return s.unknown.Load() }

// Close ends the session from the client side: it sends close 1000 and
// stops reading. If EXIT had not arrived, the result is EndDetach.
// It waits up to CloseWait for the server's close, closes the connection
// and waits for the session's goroutines. It is idempotent and returns nil.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		if s.result.Ending == EndNone {
			s.result.Ending = EndDetach
		}
		s.mu.Unlock()
		close(s.closing)
		select {
		case <-s.readerDone:
		default:
			// Best effort: the connection is closed right after.
			_ = s.conn.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(s.opts.WriteWait))
			t := time.NewTimer(s.opts.CloseWait)
			select {
			case <-s.readerDone:
			case <-t.C:
			}
			t.Stop()
		}
		_ = s.conn.Close() // the session is over either way
		s.wg.Wait()
	})
	return nil
}

// endErr is Next's error once the queue is drained.
func (s *Session) endErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result.Ending == EndLost {
		return &LostError{Err: s.result.Err}
	}
	return io.EOF
}

// end records a lost connection, unless the session had already ended.
func (s *Session) end(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.result.Ending == EndNone {
		s.result.Ending, s.result.Err = EndLost, err
	}
}

func (s *Session) readLoop() {
	defer close(s.in)
	defer close(s.readerDone)
	c := s.conn
	alive := KeepAlive(c, s.opts.PongWait, s.opts.WriteWait)
	exited := false
	for {
		typ, msg, err := c.ReadMessage()
		if err != nil {
			s.end(err)
			return
		}
		alive()
		if exited {
			continue // only the close frame may follow EXIT
		}
		m, ok, err := s.decode(typ, msg)
		if err != nil {
			s.protocolFailure(err)
			continue
		}
		if !ok {
			continue
		}
		if m.Type == FrameExit {
			exited = true
		}
		s.record(m)
		select {
		case s.in <- m:
		case <-s.closing: // nobody reads any more; keep reading for the close
		}
	}
}

// decode turns a message into a Message; ok is false for one that is
// ignored (empty, unknown type).
func (s *Session) decode(typ int, msg []byte) (Message, bool, error) {
	if typ != websocket.BinaryMessage {
		return Message{}, false, errors.New("the server sent a text message")
	}
	f, err := DecodeFrame(msg)
	if err != nil {
		return Message{}, false, nil
	}
	m := Message{Type: f.Type}
	switch f.Type {
	case FrameOutput:
		m.Output = f.Payload
		return m, true, nil
	case FrameStatus:
		m.Status = new(Status)
		err = DecodeControl(f.Payload, m.Status)
	case FrameExit:
		m.Exit = new(Exit)
		err = DecodeControl(f.Payload, m.Exit)
	case FrameError:
		m.Error = new(ErrorInfo)
		err = DecodeControl(f.Payload, m.Error)
	case FrameNotice:
		m.Notice = new(Notice)
		err = DecodeControl(f.Payload, m.Notice)
	default:
		s.unknown.Add(1)
		return Message{}, false, nil
	}
	if err != nil {
		return Message{}, false, fmt.Errorf("frame 0x%02x: %w", byte(f.Type), err)
	}
	return m, true, nil
}

// record keeps what the result needs from m.
func (s *Session) record(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch m.Type {
	case FrameStatus:
		s.result.Status = *m.Status
	case FrameNotice:
		s.result.Notices = append(s.result.Notices, *m.Notice)
	case FrameExit:
		if s.result.Ending == EndNone {
			s.result.Ending, s.result.Exit = EndExit, *m.Exit
		}
	}
}

// protocolFailure ends a session whose server broke the frame rules: the
// session is lost, and the connection closes with 1002.
func (s *Session) protocolFailure(err error) {
	s.end(fmt.Errorf("protocol error: %w", err))
	// Best effort: the connection is dropped right after.
	_ = s.conn.WriteControl(websocket.CloseMessage,
		websocket.FormatCloseMessage(websocket.CloseProtocolError, "protocol error"), time.Now().Add(s.opts.WriteWait))
	_ = s.conn.Close()
}

// writeLoop is the one goroutine writing data frames.
func (s *Session) writeLoop() {
	for {
		select {
		case msg := <-s.out:
			_ = s.conn.SetWriteDeadline(time.Now().Add(s.opts.WriteWait)) // a failure shows in the write
			if err := s.conn.WriteMessage(websocket.BinaryMessage, msg); err != nil {
				s.end(err)
				_ = s.conn.Close() // unblocks the reader
				return
			}
		case <-s.closing:
			return
		case <-s.readerDone:
			return
		}
	}
}

func (s *Session) pingLoop() {
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			// A dead connection shows up in the reader.
			_ = s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.opts.WriteWait))
		case <-s.closing:
			return
		case <-s.readerDone:
			return
		}
	}
}
