package ptyshell

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/gorilla/websocket"
)

// SubprotocolV2 is the websocket subprotocol of v2: a session that outlives
// its connections (attach, reattach, take-over) and read-only watchers. Its
// frames are v1's; it adds the EXIT reasons below, the ERROR code
// read_only, and STATUS "role".
const SubprotocolV2 = "cairn.ptyshell.v2"

// Reasons of v2. Only taken_over and watcher_lagged end a connection
// without ending the shell; detached_timeout ends the shell, and appears
// in audit rows only (nobody is attached to receive it).
const (
	// ReasonTakenOver: another connection attached with the secret and is
	// the writer now; the shell goes on (close 4003).
	ReasonTakenOver Reason = "taken_over"
	// ReasonDetachedTimeout: nobody attached for shell.timeouts.detachedSecs.
	ReasonDetachedTimeout Reason = "detached_timeout"
	// ReasonWatcherLagged: a watcher read too slowly to keep up; it is
	// dropped so the writer never waits for it (close 4004).
	ReasonWatcherLagged Reason = "watcher_lagged"
)

// Close codes of v2.
const (
	CloseTakenOver     = 4003
	CloseWatcherLagged = 4004
)

// ErrorReadOnly is the non-fatal ERROR code answering a watcher's INPUT or
// RESIZE, which is never applied.
const ErrorReadOnly = "read_only"

// STATUS roles of a v2 connection.
const (
	RoleWriter  = "writer"
	RoleWatcher = "watcher"
)

// EndError, as the cause of the context passed to Serve, ends the session
// with Reason and Message (v2's take-over, a lagging watcher, a session
// ended while this connection watched it).
type EndError struct {
	Reason  Reason
	Message string
}

func (e *EndError) Error() string { return "ptyshell: " + e.Message }

// Causes of v2 (see EndError).
var (
	ErrTakenOver     = &EndError{Reason: ReasonTakenOver, Message: "another connection took the shell over"}
	ErrWatcherLagged = &EndError{Reason: ReasonWatcherLagged, Message: "this watcher fell too far behind the shell's output"}
)

// ReasonStopper is a Stream whose stop depends on why the session ends: a
// Hub's connection stops the shell for an idle timeout, but only leaves it
// for a take-over. Serve calls StopFor instead of Stop when the stream has
// it.
type ReasonStopper interface {
	StopFor(ctx context.Context, reason Reason) error
}

func stopFor(ctx context.Context, st Stream, reason Reason) error {
	if rs, ok := st.(ReasonStopper); ok {
		return rs.StopFor(ctx, reason)
	}
	return st.Stop(ctx)
}

// Offers reports whether the request offers subprotocol proto in
// Sec-WebSocket-Protocol, possibly among others.
func Offers(r *http.Request, proto string) bool {
	return slices.Contains(websocket.Subprotocols(r), proto)
}

// Screen is the virtual terminal a Hub keeps of a session's output, so an
// attach or a watch starts from the current screen rather than a blank
// one. ptyshell/screen provides one; tests use fakes. Write must not block
// on I/O: it runs on the output path.
type Screen interface {
	Write(p []byte) (int, error)
	Resize(cols, rows int)
	// Render returns bytes that, written to a blank terminal of the
	// screen's size, reproduce the screen (and its scrollback).
	Render() []byte
}

// Recorder keeps a session's output and resizes as they happen, with the
// time of each: ptyshell/cast's Recorder is one. It runs on the output
// path, under the Hub's lock, so it must be quick (a local file); its
// errors are its own to keep (a recording that failed is reported at its
// end, never by ending the shell).
type Recorder interface {
	Output(at time.Time, p []byte) error
	Resize(at time.Time, cols, rows int) error
}
