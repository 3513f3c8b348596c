package live

import (
	"math/rand/v2"
	"time"
)

// Backoff is the retry schedule of §2.7: 250 ms doubling to 30 s, ±20 %
// jitter, forever.
type Backoff struct {
	Min, Max time.Duration
	attempt  int
	// Jitter returns a factor in [0.8, 1.2); nil uses math/rand.
	Jitter func() float64
}

// NewBackoff returns the default schedule.
func NewBackoff() *Backoff {
	return &Backoff{Min: 250 * time.Millisecond, Max: 30 * time.Second}
}

// Next returns the wait before the next attempt and advances.
func (b *Backoff) Next() time.Duration {
	d := b.Min << min(b.attempt, 20)
	if d > b.Max || d <= 0 {
		d = b.Max
	}
	b.attempt++
	j := b.Jitter
	if j == nil {
		j = func() float64 { return 0.8 + 0.4*rand.Float64() } //nolint:gosec // jitter, not security
	}
	return time.Duration(float64(d) * j())
}

// Reset starts the schedule over after a success.
func (b *Backoff) Reset() { b.attempt = 0 }
