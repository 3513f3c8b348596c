package wsexec

import (
	"context"
	"io"

	"github.com/cairn-dev/cairn/ptyshell"
)

// Process is the server's side of one command: its streams and its life.
// server/docker's CreateExec returns one for a container it has created
// but not started; Serve drives it.
//
// Serve calls Start once. Only after Start returned nil does it call
// Output (once, from one goroutine), Write and CloseStdin (from one other
// goroutine) and Wait (once); these run concurrently. Stop is called at
// most once, concurrently with the rest. Close is called exactly once, on
// every path, before Serve returns, and must unblock every other call.
type Process interface {
	// Start attaches to the command's streams, registers the wait and
	// starts it: output from its first instant reaches Output, and an
	// exit at once is not missed. ctx carries the open deadline.
	Start(ctx context.Context) error
	// Output copies the command's stdout and stderr, kept apart, to the
	// two writers until both have ended (nil), or the streams failed. A
	// writer's error ends it with that error. It never buffers more than
	// one chunk of the engine's stream.
	Output(stdout, stderr io.Writer) error
	// Write writes p to the command's stdin. An error after the command
	// stopped reading (it exited, or closed its stdin) is expected.
	Write(p []byte) (int, error)
	// CloseStdin closes the command's stdin: the half-close, after which
	// it reads end of file.
	CloseStdin() error
	// Wait blocks until the command has ended and reports how; it returns
	// once per Process. ctx is cancelled when Serve gives up.
	Wait(ctx context.Context) (ExitStatus, error)
	// Stop asks the command to end (SIGTERM, then SIGKILL after the stop
	// timeout); a no-op once it has ended.
	Stop(ctx context.Context) error
	// Signal delivers a signal, one of Signals, to the command (and what
	// it started); a no-op once it has ended.
	Signal(ctx context.Context, name string) error
	// Close is the teardown: it closes the streams, ends the command and
	// removes its container, on a context of its own. An error is logged
	// and left to the reapers.
	Close() error
}

// ExitStatus is how the command ended: the shell's, Code its exit status
// (128+N after signal N), OOMKilled for reason oom_killed, Removed for a
// container that vanished underneath (reason terminated).
type ExitStatus = ptyshell.ExitStatus

// endedBy is the status reason of an exit the command came to itself.
func endedBy(e ExitStatus) Reason {
	switch {
	case e.Removed:
		return ReasonTerminated
	case e.OOMKilled:
		return ReasonOOMKilled
	}
	return ReasonExited
}
