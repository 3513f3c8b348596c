package wsexec

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn/ptyshell"
)

// protocolError is a client that broke the frame rules; code is the close
// code that follows the status.
type protocolError struct {
	code int
	what string
}

func (e *protocolError) Error() string { return "protocol error: " + e.what }

// await waits for the session's end and returns how it ended, with the
// command ended: its own exit, the client's end, the lifetime, or ctx.
func (s *session) await(ctx context.Context) ServeResult {
	life := time.NewTimer(s.o.MaxLifetime)
	defer life.Stop()
	var deadline <-chan time.Time
	if s.o.Timeout > 0 {
		t := time.NewTimer(s.o.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	outc := s.outerr
	for {
		select {
		case w := <-s.waited:
			return s.exited(w)
		case err := <-outc:
			// The output can end before the exit (a daemon closing its
			// stdout); the exit still decides.
			s.outDone, outc = true, nil
			if err != nil {
				s.o.Logger.Debug("exec output ended", "err", err)
			}
		case err := <-s.readerr:
			s.readerDone = true
			return s.clientEnded(err)
		case <-life.C:
			return s.stopped(ReasonMaxLifetime, "ended after the maximum lifetime of "+s.o.MaxLifetime.String())
		case <-deadline:
			return s.stopped(ReasonTimeout, "ended after its timeout of "+s.o.Timeout.String())
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), ErrTerminated) {
				return s.stopped(ReasonTerminated, "ended by an operator")
			}
			return s.stopped(ReasonServerShutdown, "ended because the server is shutting down")
		}
	}
}

// exited is the end by the command's own exit, once its output drained.
func (s *session) exited(w waitResult) ServeResult {
	s.drain()
	if w.err != nil {
		return failed("the command's exit status could not be read", w.err)
	}
	return ServeResult{Reason: endedBy(w.st), ExitCode: w.st.Code}
}

// drain waits, at most the drain timeout, for the output to end, so that
// the status follows the last byte.
func (s *session) drain() {
	if s.outDone {
		return
	}
	t := time.NewTimer(s.o.DrainTimeout)
	defer t.Stop()
	select {
	case err := <-s.outerr:
		s.outDone = true
		if err != nil {
			s.o.Logger.Debug("exec output ended", "err", err)
		}
	case <-t.C:
	}
}

// stopped ends the command for reason and reports its status after.
func (s *session) stopped(reason Reason, message string) ServeResult {
	code := s.stop()
	s.drain()
	return ServeResult{Reason: reason, ExitCode: code, Err: errors.New(message)}
}

// stop stops the command and waits, at most the stop timeout, for its
// status; ExitCodeRuntime when it does not come.
func (s *session) stop() int {
	ctx, cancel := context.WithTimeout(context.Background(), s.o.StopTimeout)
	defer cancel()
	if err := s.proc.Stop(ctx); err != nil {
		s.o.Logger.Warn("exec stop failed", "err", err)
	}
	select {
	case w := <-s.waited:
		if w.err == nil {
			return w.st.Code
		}
	case <-ctx.Done():
	}
	return ExitCodeRuntime
}

// clientEnded ends the command after the reader's end: a protocol error
// still gets its status; a client that closed or went does not.
func (s *session) clientEnded(err error) ServeResult {
	code := s.stop()
	if pe, ok := errors.AsType[*protocolError](err); ok {
		s.closeCode = pe.code
		return ServeResult{Reason: ReasonProtocolError, ExitCode: code, Err: pe}
	}
	return ServeResult{Reason: ptyshell.ClientLeft(err), ExitCode: code, Err: err}
}

// finish tears the process down, then sends the status and the close
// frame where a client is left to read them, and waits briefly for the
// client's close.
func (s *session) finish(res ServeResult) {
	if res.Reason == ReasonClientClosed || res.Reason == ReasonClientGone {
		return
	}
	s.teardown() // "cairn exec ws -- cmd && cairn ws teardown ws" must find the volume free
	st := Status{ExitCode: res.ExitCode, Reason: res.Reason, Message: message(res)}
	if err := s.seal(st); err != nil {
		return // the client is gone; nothing follows
	}
	code := res.Reason.CloseCode()
	if s.closeCode != 0 {
		code = s.closeCode
	}
	msg := websocket.FormatCloseMessage(code, "")
	if s.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(s.o.WriteWait)) != nil {
		return
	}
	s.awaitClose()
}

func message(res ServeResult) string {
	switch res.Reason {
	case ReasonExited:
		return fmt.Sprintf("the command exited with status %d", res.ExitCode)
	case ReasonOOMKilled:
		return fmt.Sprintf("the command ran out of memory and was killed (status %d)", res.ExitCode)
	case ReasonTerminated:
		if res.Err == nil {
			return "the command's container was removed"
		}
	}
	if f, ok := errors.AsType[*failure](res.Err); ok {
		return f.sentence
	}
	if res.Err == nil {
		return string(res.Reason)
	}
	return res.Err.Error()
}

// seal writes the status frame, after which no data frame goes.
func (s *session) seal(st Status) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.sealed = true
	p, err := marshalStatus(st)
	if err != nil {
		return err
	}
	return s.write(ChannelStatus, p)
}

// awaitClose waits, at most closeWait, for the client's close frame: the
// reader's end, or, when it never ran, a read of our own.
func (s *session) awaitClose() {
	if s.readerDone {
		return
	}
	if !s.reading {
		awaitPeerClose(s.conn)
		return
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case err := <-s.readerr:
		s.o.Logger.Debug("exec client closed", "err", err)
	case <-t.C:
	}
}

// awaitPeerClose reads, for at most closeWait, until the peer's close
// frame or the connection's end; the caller is the only reader. Pings no
// longer move the deadline: the wait stays bounded.
func awaitPeerClose(conn *websocket.Conn) {
	conn.SetPingHandler(nil)
	conn.SetPongHandler(nil)
	_ = conn.SetReadDeadline(time.Now().Add(closeWait))
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
	}
}
