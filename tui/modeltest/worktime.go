package modeltest

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// WorkTime runs f on a locked OS thread and returns the CPU time that
// thread spent in it: the work a key press costs, without the time the
// kernel gave other processes meanwhile. The budget tests hold the work
// to its budget; on a machine whose cores another process keeps busy, the
// wall time of the same work grows with the load and says nothing about
// the code. (Work that other threads do for f — the collector's
// background marking — is not counted; f's own allocation assists are.)
func WorkTime(f func()) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	f()
	return threadCPU() - start
}

// threadCPU is the calling thread's CPU time so far.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err) // Linux always has the clock; the budget tests run there only
	}
	return time.Duration(ts.Nano())
}
