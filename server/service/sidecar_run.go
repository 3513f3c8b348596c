package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
)

// What every Runtime does alike around a sidecar run, so that each engine
// bounds, times out and reports its runs in the same words.

// TakeSidecarSlot takes one of slots, which bound the sidecars a runtime
// runs at once in this process; release gives it back. A wait that
// outlasts ctx is sidecar_busy.
func TakeSidecarSlot(ctx context.Context, slots chan struct{}) (release func(), err error) {
	select {
	case slots <- struct{}{}:
		return func() { <-slots }, nil
	case <-ctx.Done():
		return nil, &cairn.Error{Reason: cairn.ReasonSidecarBusy,
			Detail: "every sidecar slot stayed busy until the request deadline; try again later", Err: ctx.Err()}
	}
}

// SidecarTimedOut is the error of a run its runtime stopped at timeout:
// sidecar_timeout.
func SidecarTimedOut(command string, timeout time.Duration) error {
	return cairn.Errorf(cairn.ReasonSidecarTimeout,
		"the '%s' sidecar ran past its %s timeout and was stopped", command, timeout)
}

// ObserveSidecar reports a finished run to hook, when there is one: its
// command, its result (ok; failed, a non-zero exit; timeout; or error, the
// engine failed) and how long it took since start. RunSidecar defers it
// with its named results, which hold the outcome by then.
func ObserveSidecar(hook func(command, result string, took time.Duration), command string, start time.Time, run **SidecarRun, err *error) {
	if hook == nil {
		return
	}
	result := "ok"
	switch {
	case cairn.ErrorReason(*err) == cairn.ReasonSidecarTimeout:
		result = "timeout"
	case *err != nil:
		result = "error"
	case (*run).ExitCode != 0:
		result = "failed"
	}
	hook(command, result, time.Since(start))
}
