package ptyshell

import (
	"errors"
	"fmt"
	"time"

	"github.com/gorilla/websocket"
)

// Reason says why a session ended: the EXIT frame's "reason", plus the
// audit-only reasons of an ending without EXIT (see
// docs/protocols.md#exit-reasons-and-close-codes).
type Reason string

// Reasons carried by EXIT.
const (
	ReasonExited      Reason = "exited"
	ReasonOOMKilled   Reason = "oom_killed"
	ReasonIdleTimeout Reason = "idle_timeout"
	ReasonMaxLifetime Reason = "max_lifetime"
	// ReasonTimeout: an exec ran past the timeout it was given.
	ReasonTimeout        Reason = "timeout"
	ReasonTerminated     Reason = "terminated"
	ReasonServerShutdown Reason = "server_shutdown"
	ReasonProtocolError  Reason = "protocol_error"
	ReasonError          Reason = "error"
)

// Reasons of a session that ended without EXIT; they appear only in
// ServeResult (and the audit row built from it), never on the wire.
const (
	// ReasonClientClosed: the client sent a close frame first.
	ReasonClientClosed Reason = "client_closed"
	// ReasonClientGone: read error, pong timeout, write timeout, or a
	// message over the read limit.
	ReasonClientGone Reason = "client_gone"
	// ReasonNodeLost: the node the shell ran on was lost (on Kubernetes:
	// gone, or not Ready past kubernetes.nodeLostSecs); the shell could
	// not be reached, and its client's connection had already broken.
	ReasonNodeLost Reason = "node_lost"
)

// ClientLeft is the reason of a session whose client left before it
// ended, from the error that ended the read: ReasonClientClosed when the
// client sent a close frame, ReasonClientGone when the connection broke
// (gorilla reports one that ended without a close frame as 1006).
func ClientLeft(readErr error) Reason {
	if ce, ok := errors.AsType[*websocket.CloseError](readErr); ok && ce.Code != websocket.CloseAbnormalClosure {
		return ReasonClientClosed
	}
	return ReasonClientGone
}

// Close codes of the EXIT reasons beyond RFC 6455's.
const (
	CloseIdleTimeout = 4000
	CloseMaxLifetime = 4001
	CloseTerminated  = 4002
	CloseTimeout     = 4005 // after 4003 and 4004, the v2 shell's
)

// CloseCode returns the websocket close code that follows EXIT for r. A
// protocol error caused by a text frame closes with 1003 instead (Serve
// knows which).
func (r Reason) CloseCode() int {
	switch r {
	case ReasonIdleTimeout:
		return CloseIdleTimeout
	case ReasonMaxLifetime:
		return CloseMaxLifetime
	case ReasonTimeout:
		return CloseTimeout
	case ReasonTerminated:
		return CloseTerminated
	case ReasonServerShutdown:
		return websocket.CloseGoingAway
	case ReasonProtocolError:
		return websocket.ClosePolicyViolation
	case ReasonError:
		return websocket.CloseInternalServerErr
	case ReasonTakenOver:
		return CloseTakenOver
	case ReasonWatcherLagged:
		return CloseWatcherLagged
	}
	return websocket.CloseNormalClosure
}

// Exit codes used when the process's own status is unknown.
const (
	// ExitCodeRuntime is docker run's code for a failure of Docker's.
	ExitCodeRuntime = 125
	// ExitCodeKilled is 128+SIGKILL.
	ExitCodeKilled = 137
)

// Causes that select the reason when the context passed to Serve is
// cancelled with context.WithCancelCause. Any other cause is treated as
// ErrServerShutdown.
var (
	// ErrTerminated ends a session with reason "terminated" (close 4002):
	// DELETE /v1/shells/{id}.
	ErrTerminated = errors.New("ptyshell: shell terminated by an operator")
	// ErrServerShutdown ends a session with reason "server_shutdown"
	// (close 1001).
	ErrServerShutdown = errors.New("ptyshell: server shutting down")
)

// fallbackExitCode is the EXIT code for r when the process's status is
// unknown.
func fallbackExitCode(r Reason) int {
	if r == ReasonError {
		return ExitCodeRuntime
	}
	return ExitCodeKilled
}

// humanDuration renders d as "30 minutes", "8 hours" or "1 minute 30
// seconds" for EXIT messages and summary lines.
func humanDuration(d time.Duration) string {
	d = d.Round(time.Second)
	unit := func(n int64, name string) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", name)
		}
		return fmt.Sprintf("%d %ss", n, name)
	}
	h, m, s := int64(d/time.Hour), int64(d%time.Hour/time.Minute), int64(d%time.Minute/time.Second)
	switch {
	case h > 0 && m == 0 && s == 0:
		return unit(h, "hour")
	case h > 0:
		return unit(h, "hour") + " " + unit(m, "minute")
	case m > 0 && s == 0:
		return unit(m, "minute")
	case m > 0:
		return unit(m, "minute") + " " + unit(s, "second")
	}
	return unit(s, "second")
}
