package ptyshell

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// Ending is how a session ended, seen from the client.
type Ending int

const (
	// EndNone: the session has not ended.
	EndNone Ending = iota
	// EndExit: EXIT arrived; Result.Exit says how the shell ended.
	EndExit
	// EndLost: the connection ended without EXIT; Result.Err says how.
	// Never status 0.
	EndLost
	// EndDetach: the client left (the detach key, Session.Close); the
	// server ends the shell.
	EndDetach
	// EndSignal: SIGTERM or SIGHUP made the Terminal leave; Result.Signal
	// says which.
	EndSignal
)

func (e Ending) String() string {
	switch e {
	case EndExit:
		return "exit"
	case EndLost:
		return "connection lost"
	case EndDetach:
		return "detached"
	case EndSignal:
		return "signal"
	}
	return "running"
}

// Result is how a client session ended, from Session.Result and
// Terminal.Result.
type Result struct {
	Ending Ending
	// Exit is the EXIT frame, when Ending is EndExit.
	Exit Exit
	// Err is the transport's error, when Ending is EndLost.
	Err error
	// Signal is the signal, when Ending is EndSignal.
	Signal os.Signal
	// Status is the last STATUS received (zero if none).
	Status Status
	// Notices are the NOTICE frames received, in order.
	Notices []Notice
}

// Exit statuses of `cairn shell`.
const (
	ExitStatusLost = 255
)

// ExitStatus is the status `cairn shell` exits with: the shell's exit code
// when EXIT arrived, 255 for a lost connection, 0 after detaching, and
// 128+N after signal N.
func (r Result) ExitStatus() int {
	switch r.Ending {
	case EndExit:
		return r.Exit.ExitCode & 0xff
	case EndDetach:
		return 0
	case EndSignal:
		if s, ok := r.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
	}
	return ExitStatusLost
}

// Summary is the line printed after the shell, such as
// "[cairn: shell exited with status 3]".
func (r Result) Summary() string {
	switch r.Ending {
	case EndExit:
		if r.Exit.Reason == ReasonExited || r.Exit.Reason == "" {
			return fmt.Sprintf("[cairn: shell exited with status %d]", r.Exit.ExitCode)
		}
		return fmt.Sprintf("[cairn: shell ended: %s (status %d)%s]", r.reasonText(), r.Exit.ExitCode, r.warned())
	case EndLost:
		return "[cairn: connection lost — the shell was probably ended]"
	case EndDetach:
		return "[cairn: left the shell; the server ends it]"
	case EndSignal:
		return fmt.Sprintf("[cairn: left the shell on %v; the server ends it]", r.Signal)
	}
	return "[cairn: the shell is still running]"
}

func (r Result) reasonText() string {
	switch r.Exit.Reason {
	case ReasonIdleTimeout:
		if r.Status.IdleTimeoutSecs > 0 {
			return "idle timeout after " + shortDuration(time.Duration(r.Status.IdleTimeoutSecs)*time.Second)
		}
		return "idle timeout"
	case ReasonMaxLifetime:
		if r.Status.MaxLifetimeSecs > 0 {
			return "maximum lifetime of " + shortDuration(time.Duration(r.Status.MaxLifetimeSecs)*time.Second) + " reached"
		}
		return "maximum lifetime reached"
	case ReasonTerminated:
		return "terminated"
	case ReasonServerShutdown:
		return "the server is shutting down"
	case ReasonOOMKilled:
		return "out of memory"
	case ReasonProtocolError:
		return "protocol error"
	case ReasonError:
		return "server error"
	}
	return strings.ReplaceAll(string(r.Exit.Reason), "_", " ")
}

// warned mentions the NOTICE that announced the ending, if one did.
func (r Result) warned() string {
	want := map[Reason]string{ReasonIdleTimeout: NoticeIdleWarning, ReasonMaxLifetime: NoticeLifetimeWarning}[r.Exit.Reason]
	for i := len(r.Notices) - 1; i >= 0; i-- {
		if n := r.Notices[i]; want != "" && n.Code == want {
			return fmt.Sprintf("; warned %s before", shortDuration(time.Duration(n.SecondsLeft)*time.Second))
		}
	}
	return ""
}

// shortDuration renders d as "30 min", "8 h", "1 h 30 min" or "45 s".
func shortDuration(d time.Duration) string {
	h, m, s := int(d/time.Hour), int(d%time.Hour/time.Minute), int(d%time.Minute/time.Second)
	var parts []string
	if h > 0 {
		parts = append(parts, fmt.Sprintf("%d h", h))
	}
	if m > 0 {
		parts = append(parts, fmt.Sprintf("%d min", m))
	}
	if s > 0 || len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d s", s))
	}
	return strings.Join(parts, " ")
}
