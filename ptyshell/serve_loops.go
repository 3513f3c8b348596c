package ptyshell

import (
	"errors"
	"io"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// writeLoop is the one goroutine that writes data frames to the socket.
// It ends after the close frame, when the queue is closed, or on the first
// failed write.
func (s *server) writeLoop() {
	defer close(s.writerDone)
	for f := range s.out.q {
		if f.close {
			// The client may already be gone; the close frame is best effort.
			_ = s.conn.WriteControl(websocket.CloseMessage,
				websocket.FormatCloseMessage(f.closeCode, f.closeText), time.Now().Add(s.opts.WriteWait))
			return
		}
		_ = s.conn.SetWriteDeadline(time.Now().Add(s.opts.WriteWait)) // a failure shows in the write
		if err := s.conn.WriteMessage(websocket.BinaryMessage, f.msg); err != nil {
			s.report(event{kind: evWriterFailed, err: err})
			return
		}
		switch FrameType(f.msg[0]) {
		case FrameOutput:
			s.bytesOut.Add(int64(len(f.msg) - 1))
		case FrameExit:
			s.exitSent.Store(true)
		}
	}
}

// pingLoop sends a Ping every PingInterval, beside the writer: gorilla
// allows WriteControl concurrently, so a ping never waits behind OUTPUT.
func (s *server) pingLoop() {
	t := time.NewTicker(s.opts.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if err := s.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(s.opts.WriteWait)); err != nil {
				s.report(event{kind: evWriterFailed, err: err})
				return
			}
		case <-s.out.isSealing():
			return
		case <-s.halt:
			return
		}
	}
}

// readLoop reads the socket at all times, so control frames are processed
// and the read deadline moves. INPUT goes to the input pump in order,
// RESIZE to the resize slot; after a protocol error it keeps reading but
// drops every frame.
func (s *server) readLoop() {
	c := s.conn
	c.SetReadLimit(ServerReadLimit)
	alive := KeepAlive(c, s.opts.PongWait, s.opts.WriteWait)
	broken := false
	for {
		typ, msg, err := c.ReadMessage()
		if err != nil {
			s.report(event{kind: evReaderEnded, err: err})
			return
		}
		alive()
		if broken {
			continue
		}
		if typ != websocket.BinaryMessage {
			broken = true
			s.report(event{kind: evProtocol, closeCode: websocket.CloseUnsupportedData, err: errors.New("text frame")})
			continue
		}
		f, err := DecodeFrame(msg)
		if err != nil {
			continue // an empty message carries nothing
		}
		if s.opts.ReadOnly && (f.Type == FrameInput || f.Type == FrameResize) {
			s.refuseReadOnly(f.Type)
			continue
		}
		switch f.Type {
		case FrameInput:
			if !s.takeInput(f.Payload) {
				return
			}
		case FrameResize:
			size, err := ParseResize(f.Payload)
			if err != nil {
				broken = true
				s.report(event{kind: evProtocol, closeCode: websocket.ClosePolicyViolation, err: err})
				continue
			}
			s.sizes.put(size.Clamp())
		case FrameSignal:
			// Reserved; a v1 server ignores it.
		default:
			s.unknown.Add(1)
		}
	}
}

// refuseReadOnly answers the first INPUT and the first RESIZE of a
// read-only connection (a watcher) with a non-fatal ERROR read_only; the
// frame is never applied, and later ones are dropped silently.
func (s *server) refuseReadOnly(t FrameType) {
	bit := int32(1) << t
	if s.refused.Or(bit)&bit != 0 {
		return
	}
	s.putControl(FrameError, ErrorInfo{Code: ErrorReadOnly, Message: "a watcher cannot type or resize; its frames are dropped"})
}

// takeInput records an INPUT frame and queues it for the input pump,
// blocking while the queue is full. It returns false once the session is
// over.
func (s *server) takeInput(p []byte) bool {
	if len(p) == 0 {
		return true
	}
	now := s.clock.Now()
	s.lastInput.Store(now.UnixNano())
	s.bytesIn.Add(int64(len(p)))
	if s.opts.OnInput != nil {
		s.opts.OnInput(now, len(p))
	}
	select {
	case s.input <- p:
		return true
	case <-s.halt:
		return false
	}
}

// inputLoop writes INPUT to the stream, in order, once it has started and
// its first size is applied: a command typed at once (stty size) must see
// the terminal's size, not the 0×0 of a TTY nobody sized yet. INPUT that
// arrived earlier waits in the queue. After a failed write it discards the
// rest: the attach stream is broken, and its read side ends the session.
func (s *server) inputLoop() {
	select {
	case <-s.sized:
	case <-s.halt:
		return
	}
	failed := false
	for {
		select {
		case p := <-s.input:
			if failed {
				continue
			}
			if _, err := s.stream.Write(p); err != nil {
				failed = true
				s.log.Debug("shell input failed", "err", err)
			}
		case <-s.halt:
			return
		}
	}
}

// outputLoop copies the stream's output into OUTPUT frames, one read per
// frame, until EOF. It blocks while the queue is full, which blocks the
// process once its terminal buffer fills: bounded and lossless.
func (s *server) outputLoop() {
	buf := make([]byte, MaxDataPayload)
	for {
		n, err := s.stream.Read(buf)
		if n > 0 {
			msg := make([]byte, 1+n)
			msg[0] = byte(FrameOutput)
			copy(msg[1:], buf[:n])
			if !s.out.put(msg) {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			s.report(event{kind: evOutputEnded, err: err})
			return
		}
	}
}

// resizeLoop applies sizes: first the latest RESIZE or the handshake's,
// with retries, then each later RESIZE at most once per ResizeInterval,
// latest wins.
func (s *server) resizeLoop() {
	select {
	case <-s.started:
	case <-s.halt:
		return
	}
	applied, ok := s.firstResize()
	close(s.sized)
	last := s.clock.Now()
	for {
		select {
		case <-s.sizes.notify:
		case <-s.halt:
			return
		}
		if wait := last.Add(ResizeInterval).Sub(s.clock.Now()); wait > 0 {
			t := s.clock.NewTimer(wait)
			select {
			case <-t.C():
			case <-s.halt:
				t.Stop()
				return
			}
		}
		size, _ := s.sizes.get()
		if ok && size == applied {
			continue
		}
		last = s.clock.Now()
		if err := s.stream.Resize(s.sessCtx, size); err != nil {
			s.resizeFailed(err)
			ok = false
			continue
		}
		applied, ok = size, true
	}
}

// firstResize applies the first size, retrying while the process is being
// set up: up to resizeTries tries, 10 ms × the try number apart, stopping
// once the process has exited.
func (s *server) firstResize() (Size, bool) {
	size, ok := s.sizes.get()
	if !ok {
		size = s.opts.Size.Clamp()
		if s.opts.Size == (Size{}) {
			return Size{}, false
		}
	}
	var err error
	for try := 1; try <= resizeTries; try++ {
		if err = s.stream.Resize(s.sessCtx, size); err == nil {
			return size, true
		}
		if try == resizeTries {
			break
		}
		t := time.NewTimer(time.Duration(try) * 10 * time.Millisecond)
		select {
		case <-t.C:
		case <-s.exited:
			t.Stop()
			return Size{}, false
		case <-s.halt:
			t.Stop()
			return Size{}, false
		}
	}
	s.resizeFailed(err)
	return Size{}, false
}

// resizeFailed logs a failed resize and reports it as a non-fatal ERROR.
func (s *server) resizeFailed(err error) {
	s.log.Debug("shell resize failed", "err", err)
	s.putControl(FrameError, ErrorInfo{Code: ErrorResizeFailed, Message: "the terminal could not be resized"})
}

// sizeSlot holds the latest requested size; notify has a token whenever it
// changed since the resizer last looked.
type sizeSlot struct {
	mu     sync.Mutex
	size   Size
	set    bool
	notify chan struct{}
}

func newSizeSlot() *sizeSlot { return &sizeSlot{notify: make(chan struct{}, 1)} }

func (z *sizeSlot) put(size Size) {
	z.mu.Lock()
	z.size, z.set = size, true
	z.mu.Unlock()
	select {
	case z.notify <- struct{}{}:
	default:
	}
}

func (z *sizeSlot) get() (Size, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.size, z.set
}
