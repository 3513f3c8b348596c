package ptyshell

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// control runs the Hub's own ending: the deadlines that apply while no
// writer is attached (detached, idle, lifetime), End, and the natural end
// — the output's end and the exit status, the second awaited at most
// DrainTimeout after the first.
func (h *Hub) control() {
	var drain <-chan time.Time
	outDone, waitDone := h.outDone, h.waitDone
	for outDone != nil || waitDone != nil {
		t, reason := h.deadline()
		select {
		case <-h.changed:
		case cause := <-h.ending:
			h.stopFor(reasonOf(cause), cause)
		case <-timerC(t):
			h.expire(reason)
		case <-outDone:
			outDone, drain = nil, h.armDrain(drain)
		case <-waitDone:
			waitDone, drain = nil, h.armDrain(drain)
		case <-drain:
			outDone, waitDone = nil, nil
		}
		stopTimer(t)
	}
	h.finish()
}

func (h *Hub) armDrain(d <-chan time.Time) <-chan time.Time {
	if d != nil {
		return d
	}
	return time.After(h.opts.DrainTimeout)
}

// nextEnd is the earliest deadline of a detached shell, and its reason;
// ok is false while a writer is attached (its Serve keeps the idle and
// lifetime deadlines then) or once the shell is stopping.
func (h *Hub) nextEnd() (at time.Time, reason Reason, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.writer != nil || h.stopping {
		return time.Time{}, "", false
	}
	at, reason = h.detachedAt.Add(h.opts.Detached), ReasonDetachedTimeout
	if h.opts.IdleTimeout > 0 {
		if idle := h.lastInput.Add(h.opts.IdleTimeout); idle.Before(at) {
			at, reason = idle, ReasonIdleTimeout
		}
	}
	if life := h.startedAt.Add(h.opts.MaxLifetime); life.Before(at) {
		at, reason = life, ReasonMaxLifetime
	}
	return at, reason, true
}

func (h *Hub) deadline() (Timer, Reason) {
	at, reason, ok := h.nextEnd()
	if !ok {
		return nil, ""
	}
	return h.clock.NewTimer(max(at.Sub(h.clock.Now()), 0)), reason
}

// expire ends a detached shell whose deadline has passed; a writer that
// attached meanwhile, or a moved deadline, keeps it.
func (h *Hub) expire(Reason) {
	at, reason, ok := h.nextEnd()
	if !ok || h.clock.Now().Before(at) {
		return
	}
	h.stopFor(reason, &EndError{Reason: reason, Message: endMessage(reason)})
}

func endMessage(r Reason) string {
	if r == ReasonDetachedTimeout {
		return "closed after nobody was attached for too long"
	}
	return fmt.Sprintf("the shell ended (%s)", r)
}

// reasonOf maps End's cause to its reason, as Serve's endByCause does.
func reasonOf(cause error) Reason {
	if errors.Is(cause, ErrTerminated) {
		return ReasonTerminated
	}
	if ee, ok := errors.AsType[*EndError](cause); ok {
		return ee.Reason
	}
	return ReasonServerShutdown
}

// stopFor ends the shell for reason, once: every connection's Serve is
// ended with cause (so each gets EXIT with that reason), and the process
// is stopped; the natural end follows.
func (h *Hub) stopFor(reason Reason, cause error) {
	h.mu.Lock()
	if h.stopping {
		h.mu.Unlock()
		return
	}
	h.stopping, h.endReason = true, reason
	h.wg.Add(1) // under the lock: finish waits only once stopping is set
	taps := make([]*Tap, 0, 1+len(h.watchers))
	if h.writer != nil {
		taps = append(taps, h.writer)
	}
	for w := range h.watchers {
		taps = append(taps, w)
	}
	h.mu.Unlock()
	for _, t := range taps {
		t.cancel(cause)
	}
	go func() {
		defer h.wg.Done()
		ctx, cancel := context.WithTimeout(h.ctx, h.opts.StopTimeout)
		defer cancel()
		if err := h.stream.Stop(ctx); err != nil {
			h.log.Warn("shell stop failed", "err", err)
		}
	}()
}

// finish closes the stream and records the result.
func (h *Hub) finish() {
	h.mu.Lock()
	h.stopping = true
	reason := h.endReason
	h.mu.Unlock()
	h.closeStream()
	h.cancel()
	h.wg.Wait()
	waited := isClosed(h.waitDone)
	res := HubResult{Reason: reason, ExitCode: -1, BytesIn: h.bytesIn.Load(), BytesOut: h.bytesOut.Load()}
	if waited && h.waitErr == nil {
		res.ExitCode = h.status.Code
	}
	if res.Reason == "" {
		res.Reason, res.Err = h.naturalReason(waited)
	}
	if res.ExitCode < 0 {
		res.ExitCode = fallbackExitCode(res.Reason)
	}
	h.result = res
	close(h.done)
}

func (h *Hub) naturalReason(waited bool) (Reason, error) {
	switch {
	case h.outErr != nil:
		return ReasonError, fmt.Errorf("read: %w", h.outErr)
	case !waited:
		return ReasonError, errors.New("no exit status after the output ended")
	case h.waitErr != nil:
		return ReasonError, fmt.Errorf("wait: %w", h.waitErr)
	case h.status.Removed:
		return ReasonTerminated, nil
	case h.status.OOMKilled:
		return ReasonOOMKilled, nil
	}
	return ReasonExited, nil
}

func (h *Hub) closeStream() {
	if err := h.stream.Close(); err != nil {
		h.log.Error("shell teardown failed", "err", err)
	}
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (h *Hub) signal() {
	select {
	case h.changed <- struct{}{}:
	default:
	}
}
