package ptyshell

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/gorilla/websocket"
)

// endByCause ends the session for a cancelled ctx.
func (s *server) endByCause(e *ending, cause error) {
	if errors.Is(cause, ErrTerminated) {
		s.end(e, ReasonTerminated, CloseTerminated, "ended by an operator", nil, nil)
		return
	}
	if ee, ok := errors.AsType[*EndError](cause); ok {
		s.end(e, ee.Reason, ee.Reason.CloseCode(), ee.Message, nil, nil)
		return
	}
	s.end(e, ReasonServerShutdown, websocket.CloseGoingAway, "the server is shutting down", nil, nil)
}

// fail ends the session with reason "error" and a fatal ERROR.
func (s *server) fail(e *ending, code, message string, err error) {
	s.end(e, ReasonError, websocket.CloseInternalServerErr, message, &ErrorInfo{Code: code, Message: message, Fatal: true}, err)
}

// end forces the session to end for reason: the first trigger wins, and a
// process that has already exited keeps its natural ending. A running
// process is stopped; its status and remaining output are then drained as
// for a natural exit.
func (s *server) end(e *ending, reason Reason, closeCode int, message string, fatal *ErrorInfo, err error) {
	if e.reason != "" || e.gone || e.gotWait {
		return
	}
	e.reason, e.closeCode, e.message, e.fatal, e.err = reason, closeCode, message, fatal, err
	if e.phase != phaseRunning || e.stopping {
		return
	}
	e.stopping = true
	s.spawn(func() {
		ctx, cancel := context.WithTimeout(s.sessCtx, s.opts.StopTimeout)
		defer cancel()
		s.report(event{kind: evStopped, err: stopFor(ctx, s.stream, reason)})
	})
}

// armDrain starts the bound on waiting for the rest of the ending, once.
func (s *server) armDrain(e *ending) {
	if e.drain == nil {
		e.drain = time.NewTimer(s.opts.DrainTimeout)
	}
}

// onIdle runs when the idle timer fires: it ends the session, sends the
// warning, or re-arms for the next point, reading the last INPUT time that
// the socket reader keeps.
func (s *server) onIdle(e *ending) {
	if e.reason != "" || e.gotWait {
		return
	}
	now := s.clock.Now()
	last := time.Unix(0, s.lastInput.Load())
	endAt := last.Add(s.opts.IdleTimeout)
	if !now.Before(endAt) {
		e.idle = nil
		s.end(e, ReasonIdleTimeout, CloseIdleTimeout,
			fmt.Sprintf("closed after %s without input", humanDuration(s.opts.IdleTimeout)), nil, nil)
		return
	}
	next, warn := endAt, false
	if s.opts.IdleWarning > 0 && !e.idleWarnedFor.Equal(last) {
		if warnAt := endAt.Add(-s.opts.IdleWarning); now.Before(warnAt) {
			next = warnAt
		} else {
			warn, e.idleWarnedFor = true, last
		}
	}
	e.idle = s.clock.NewTimer(next.Sub(now))
	if warn {
		s.putControl(FrameNotice, Notice{Code: NoticeIdleWarning, SecondsLeft: ceilSeconds(endAt.Sub(now))})
	}
}

// onLifetime runs when the lifetime timer fires: first the warning, then
// the end. Input never extends it.
func (s *server) onLifetime(e *ending) {
	if e.reason != "" || e.gotWait {
		return
	}
	now := s.clock.Now()
	endAt := e.runningAt.Add(s.opts.MaxLifetime)
	if !now.Before(endAt) {
		e.life = nil
		s.end(e, ReasonMaxLifetime, CloseMaxLifetime,
			fmt.Sprintf("closed after reaching the maximum lifetime of %s", humanDuration(s.opts.MaxLifetime)), nil, nil)
		return
	}
	e.life = s.clock.NewTimer(endAt.Sub(now))
	if s.opts.LifetimeWarning > 0 && !e.lifeWarned {
		e.lifeWarned = true
		s.putControl(FrameNotice, Notice{Code: NoticeLifetimeWarning, SecondsLeft: ceilSeconds(endAt.Sub(now))})
	}
}

// outcome decides the EXIT frame of an ending that can still send one.
func (s *server) outcome(e *ending) (Exit, int, *ErrorInfo, error) {
	code := -1
	if e.gotWait && e.waitErr == nil {
		code = e.wait.Code
	}
	reason, closeCode, message, fatal, err := e.reason, e.closeCode, e.message, e.fatal, e.err
	if reason == "" {
		runtimeErr := func(msg string, cause error) {
			reason, closeCode, message, err = ReasonError, websocket.CloseInternalServerErr, msg, cause
			fatal = &ErrorInfo{Code: ErrorRuntime, Message: msg, Fatal: true}
		}
		switch {
		case e.outErr != nil:
			runtimeErr("the shell's terminal stream failed", fmt.Errorf("read: %w", e.outErr))
		case !e.gotWait:
			runtimeErr("the shell's exit status could not be read", errors.New("no exit status after the output ended"))
		case e.waitErr != nil:
			runtimeErr("the shell's exit status could not be read", fmt.Errorf("wait: %w", e.waitErr))
		case e.wait.Removed:
			reason, closeCode, message = ReasonTerminated, CloseTerminated, "the shell's container was removed"
		case e.wait.OOMKilled:
			reason, closeCode, message = ReasonOOMKilled, websocket.CloseNormalClosure, "the shell ran out of memory"
		default:
			reason, closeCode, message = ReasonExited, websocket.CloseNormalClosure, fmt.Sprintf("the shell exited with status %d", code)
		}
	}
	if code < 0 {
		code = fallbackExitCode(reason)
	}
	return Exit{ExitCode: code, Reason: reason, Message: message}, closeCode, fatal, err
}

// finish tears the stream down, sends the last frames, if anyone is
// listening, and returns the result.
func (s *server) finish(e *ending) ServeResult {
	res := ServeResult{Running: e.phase == phaseRunning, ExitCode: -1}
	if e.gotWait && e.waitErr == nil {
		res.ExitCode = e.wait.Code
	}
	if e.gone {
		s.out.seal()
		res.Reason, res.Err = e.goneReason, e.goneErr
	} else {
		exit, closeCode, fatal, err := s.outcome(e)
		res.Reason, res.ExitCode, res.Err = exit.Reason, exit.ExitCode, err
		// The teardown before the EXIT: a client that read it finds the
		// container gone and the workspace's volume free for a teardown.
		s.closeStream()
		s.sendFinal(exit, closeCode, fatal)
		if !s.exitSent.Load() {
			res.Reason = ReasonClientGone
		}
	}
	close(s.halt)
	s.cancel()
	s.closeStream()
	_ = s.conn.Close() // the session is over either way
	s.wg.Wait()
	res.BytesIn, res.BytesOut, res.UnknownFrames = s.bytesIn.Load(), s.bytesOut.Load(), s.unknown.Load()
	return res
}

// sendFinal enqueues [fatal ERROR], EXIT and the close frame behind
// everything already queued, waits for the writer to send them, then waits
// up to CloseWait for the client's close frame.
func (s *server) sendFinal(exit Exit, closeCode int, fatal *ErrorInfo) {
	var final []outFrame
	if fatal != nil {
		if msg, err := EncodeControl(FrameError, fatal); err == nil {
			final = append(final, outFrame{msg: msg})
		}
	}
	msg, err := EncodeControl(FrameExit, exit)
	if err != nil { // an oversized message; send the frame without it
		exit.Message = ""
		msg, _ = EncodeControl(FrameExit, exit)
	}
	final = append(final, outFrame{msg: msg}, outFrame{close: true, closeCode: closeCode, closeText: string(exit.Reason)})
	s.out.seal(final...)
	<-s.writerDone

	t := time.NewTimer(s.opts.CloseWait)
	defer t.Stop()
	for {
		select {
		case ev := <-s.events:
			if ev.kind == evReaderEnded {
				return
			}
		case <-t.C:
			return
		}
	}
}

// status returns the STATUS payload for state.
func (s *server) status(state string) Status {
	st := s.opts.Status
	st.State = state
	st.IdleTimeoutSecs = int(s.opts.IdleTimeout / time.Second)
	st.MaxLifetimeSecs = int(s.opts.MaxLifetime / time.Second)
	if st.Features == nil {
		st.Features = []string{}
	}
	return st
}

// putControl enqueues a control frame; it gives up once the session is
// being finished.
func (s *server) putControl(t FrameType, v any) {
	msg, err := EncodeControl(t, v)
	if err != nil {
		s.log.Error("shell control frame dropped", "err", err)
		return
	}
	s.out.put(msg)
}

func ceilSeconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }

func timerC(t Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C()
}

func drainC(t *time.Timer) <-chan time.Time {
	if t == nil {
		return nil
	}
	return t.C
}

func stopTimer(t Timer) {
	if t != nil {
		t.Stop()
	}
}

// closeStream closes the stream once, whichever path reaches it first.
func (s *server) closeStream() {
	s.closeOnce.Do(func() {
		if err := s.stream.Close(); err != nil {
			s.log.Error("shell teardown failed", "err", err)
		}
	})
}
