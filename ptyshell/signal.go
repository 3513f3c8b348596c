package ptyshell

import (
	"maps"
	"slices"
	"syscall"
)

// signals are the signals a client may send a command or a shell, by name
// without "SIG": those a user sends a job, never one that asks for a core
// or stands for a fault.
var signals = map[string]syscall.Signal{
	"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT, "KILL": syscall.SIGKILL,
	"USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "TERM": syscall.SIGTERM, "CONT": syscall.SIGCONT,
	"STOP": syscall.SIGSTOP, "TSTP": syscall.SIGTSTP, "WINCH": syscall.SIGWINCH, "ALRM": syscall.SIGALRM,
}

// SignalNames lists the names a client may send, sorted.
var SignalNames = slices.Sorted(maps.Keys(signals))

// SignalOf is the signal a name stands for, and whether it is one a
// client may send.
func SignalOf(name string) (syscall.Signal, bool) {
	s, ok := signals[name]
	return s, ok
}
