package termkit_test

import (
	"testing"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
)

const ms = time.Millisecond

func TestRedial(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		tries int
		want  []time.Duration
	}{
		{"DoublesToTheCap", 10, []time.Duration{250 * ms, 500 * ms, time.Second, 2 * time.Second, 4 * time.Second,
			8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second, 30 * time.Second}},
		{"NeverStops", 40, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := termkit.Redial()
			b.RandomizationFactor = 0
			got := waits(b, c.tries)
			if c.want != nil {
				require.Equal(t, c.want, got)
			}
			require.NotContains(t, got, backoff.Stop)
			b.Reset()
			require.Equal(t, 250*ms, b.NextBackOff(), "Reset starts over")
		})
	}
}

func TestRetry(t *testing.T) {
	t.Parallel()
	b := termkit.Retry()
	b.RandomizationFactor = 0
	require.Equal(t, []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 2 * time.Second, 2 * time.Second},
		waits(b, 7))
}

func TestJitter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		b          *backoff.ExponentialBackOff
		first, cap time.Duration
	}{
		{"Redial", termkit.Redial(), 250 * ms, 30 * time.Second},
		{"Retry", termkit.Retry(), 100 * ms, 2 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			spread := map[time.Duration]bool{}
			for range 200 {
				c.b.Reset()
				d := c.b.NextBackOff()
				require.InDelta(t, c.first, d, 0.2*float64(c.first)+1, "±20 %%")
				spread[d] = true
			}
			require.Greater(t, len(spread), 1, "the waits are spread")
			for _, d := range waits(c.b, 100) {
				require.LessOrEqual(t, d, c.cap+c.cap/5)
			}
		})
	}
}

func waits(b backoff.BackOff, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = b.NextBackOff()
	}
	return out
}
