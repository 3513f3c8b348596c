package termkit

import (
	"time"

	"github.com/cenkalti/backoff/v5"
)

// The reconnect schedule of an events stream (see Redial).
const (
	RedialFirst = 250 * time.Millisecond
	RedialMax   = 30 * time.Second
)

// The retry schedule of an idempotent REST request after a connection
// failure.
const (
	RetryFirst = 100 * time.Millisecond
	RetryMax   = 2 * time.Second
)

// jitter is how far each wait is spread either way: ±20 %.
const jitter = 0.2

// Redial returns the schedule between the dials of an events stream:
// 250 ms, doubled after each failure up to 30 s, each wait spread by
// ±20 %, forever (NextBackOff never returns backoff.Stop). Reset starts it
// over after a success. It is a backoff/v5 ExponentialBackOff, not safe
// for concurrent use; a test wanting exact waits sets its
// RandomizationFactor to 0.
func Redial() *backoff.ExponentialBackOff {
	return schedule(RedialFirst, RedialMax)
}

// Retry returns the schedule between the attempts of one idempotent REST
// request: 100 ms, doubled up to 2 s, each wait spread by ±20 %. The
// caller bounds the number of attempts.
func Retry() *backoff.ExponentialBackOff {
	return schedule(RetryFirst, RetryMax)
}

func schedule(first, most time.Duration) *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     first,
		RandomizationFactor: jitter,
		Multiplier:          2,
		MaxInterval:         most,
	}
	b.Reset()
	return b
}
