package wsexec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/gorilla/websocket"
)

// read reads the client's messages until an error, delivering stdin to
// the command synchronously: while the command does not take its stdin,
// no further message is read, and TCP pushes back on the client. Its one
// buffer is reused for every message.
func (s *session) read() error {
	buf := make([]byte, ReadLimit)
	in := stdinState{open: true}
	for {
		s.alive()
		mt, r, err := s.conn.NextReader()
		if err != nil {
			return err
		}
		if mt != websocket.BinaryMessage {
			return &protocolError{code: websocket.CloseUnsupportedData, what: "a text message"}
		}
		n, err := io.ReadFull(r, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return err
		}
		if err := s.deliver(&in, buf[:n]); err != nil {
			return err
		}
	}
}

// stdinState is the reader's view of the command's stdin.
type stdinState struct {
	open   bool // no close(0) yet
	broken bool // a write failed: the command stopped reading; drop the rest
}

// deliver handles one client message.
func (s *session) deliver(in *stdinState, msg []byte) error {
	if len(msg) == 0 {
		return nil
	}
	switch msg[0] {
	case ChannelStdin:
		switch {
		case !in.open:
			return &protocolError{code: websocket.ClosePolicyViolation, what: "stdin after its close"}
		case len(msg)-1 > MaxDataPayload:
			return &protocolError{code: websocket.ClosePolicyViolation,
				what: fmt.Sprintf("a stdin frame of more than %d bytes", MaxDataPayload)}
		case in.broken:
			return nil
		}
		if _, err := s.proc.Write(msg[1:]); err != nil {
			in.broken = true
			return nil
		}
		s.in.Add(int64(len(msg) - 1))
	case ChannelSignal:
		name := string(msg[1:])
		if !slices.Contains(Signals, name) {
			return &protocolError{code: websocket.ClosePolicyViolation, what: "a signal frame naming no signal cairn delivers"}
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.o.WriteWait)
		defer cancel()
		if err := s.proc.Signal(ctx, name); err != nil {
			s.o.Logger.Info("exec signal not delivered", "signal", name, "err", err)
		}
	case ChannelClose:
		if len(msg) != 2 {
			return &protocolError{code: websocket.ClosePolicyViolation, what: "a close frame without its one channel byte"}
		}
		if msg[1] == ChannelStdin && in.open {
			in.open = false
			if !in.broken {
				_ = s.proc.CloseStdin() // a command that has gone has no stdin left to close
			}
		}
	}
	return nil
}

// chanWriter sends what it is given on one channel, in frames of at most
// MaxDataPayload.
type chanWriter struct {
	s  *session
	ch byte
}

func (s *session) writer(ch byte) io.Writer { return chanWriter{s: s, ch: ch} }

func (w chanWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), MaxDataPayload)
		if err := w.s.send(w.ch, p[:k]); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

// send writes one data frame unless the status has gone.
func (s *session) send(ch byte, p []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.sealed {
		return errSealed
	}
	if err := s.write(ch, p); err != nil {
		return err
	}
	s.out.Add(int64(len(p)))
	return nil
}

// write writes one message; the caller holds wmu.
func (s *session) write(ch byte, p []byte) error { return writeFrame(s.conn, s.o.WriteWait, ch, p) }

// writeFrame writes one message, the channel byte then p, under the write
// deadline; one writer at a time.
func writeFrame(conn *websocket.Conn, writeWait time.Duration, ch byte, p []byte) error {
	_ = conn.SetWriteDeadline(time.Now().Add(writeWait)) // a failure shows in the write
	w, err := conn.NextWriter(websocket.BinaryMessage)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte{ch}); err != nil {
		return err
	}
	if _, err := w.Write(p); err != nil {
		return err
	}
	return w.Close()
}

func marshalStatus(st Status) ([]byte, error) {
	p, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode the status: %w", err)
	}
	if len(p) > MaxStatusPayload {
		st.Message = ""
		return json.Marshal(st)
	}
	return p, nil
}
