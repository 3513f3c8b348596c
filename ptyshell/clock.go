package ptyshell

import "time"

// Clock is the time source of the timers that tests need to drive: the
// server's idle and lifetime timers and both ends' resize debounce. Socket
// deadlines, pings and short bounded waits (drain, close, retry backoff)
// always use real time, because the network does.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once, d after Now.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// SystemClock is the real clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time { return time.Now() }

func (SystemClock) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (t systemTimer) C() <-chan time.Time { return t.t.C }
func (t systemTimer) Stop() bool          { return t.t.Stop() }
