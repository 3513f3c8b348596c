package ptyshell

import "context"

// Stream is the server's side of one shell process: its terminal and its
// life. server/docker's OpenShell returns one for a container it has
// created but not started; Serve drives it.
//
// Serve calls Start once. Only after Start returned nil does it call Read
// (from one goroutine), Write (from one goroutine), Resize (from one
// goroutine, never concurrently with itself) and Wait (once); these run
// concurrently with each other. Stop is called at most once, concurrently
// with the rest. Close is called exactly once, on every path, before Serve
// returns, and may be concurrent with any other call, which it must
// unblock.
type Stream interface {
	// Start attaches to the terminal, registers the wait and starts the
	// process, in that order, so that neither its first output nor an
	// immediate exit is missed; the resize is Serve's.
	// Output written by the process from its first instant must reach Read.
	// ctx carries the open deadline. An error ends the session with a fatal
	// ERROR (runtime_error, or open_timeout when ctx's deadline passed) and
	// EXIT "error" (125).
	Start(ctx context.Context) error

	// Read reads the terminal's output as raw bytes. It returns io.EOF once
	// the output has ended: after the process exited and its last byte was
	// read, or after Close. Any other error is a runtime failure.
	Read(p []byte) (int, error)

	// Write writes p to the terminal's input verbatim. The input is never
	// half-closed. An error after the process has ended is expected and
	// harmless.
	Write(p []byte) (int, error)

	// Resize sets the terminal size. Serve passes clamped sizes, applies at
	// most one every 50 ms, and retries the first one, which may fail while
	// the process is still being set up. An error is never fatal.
	Resize(ctx context.Context, size Size) error

	// Wait blocks until the process has ended and reports how. It returns
	// exactly once per Stream. An error (the status could not be read) ends
	// the session with reason "error"; ctx is cancelled when Serve gives up.
	Wait(ctx context.Context) (ExitStatus, error)

	// Stop asks the process to end — SIGHUP, then SIGKILL after the stop
	// timeout — and returns once it has ended or ctx is done. It is a no-op
	// if the process has already ended. Wait then reports the status.
	Stop(ctx context.Context) error

	// Close is the teardown: it closes the attach stream, stops and removes
	// the process, and unblocks every pending call. It takes no context: it
	// runs on its own, detached from the request, with its own deadline
	// (stopSecs + 10 s). Serve calls it exactly once, after the last frame
	// was sent or the client was found gone; Serve's result then says how
	// the session ended, for the audit row. An error is logged by Serve and
	// left to the reapers.
	Close() error
}

// ExitStatus is how the process ended, as Stream.Wait reports it.
type ExitStatus struct {
	// Code is the exit status; a process killed by signal N reports 128+N.
	Code int
	// OOMKilled selects reason "oom_killed".
	OOMKilled bool
	// Removed means the process vanished underneath the session (its
	// container was removed by someone else); it selects reason
	// "terminated". Code is then the status Docker reported, else 137.
	Removed bool
}
