package termkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/termkit"
)

type sample struct {
	done, total int64
	at          time.Duration // after epoch
}

func feed(samples []sample) *termkit.Meter {
	var m termkit.Meter
	for _, s := range samples {
		m.Sample(s.done, s.total, epoch.Add(s.at))
	}
	return &m
}

func TestMeterSample(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		samples []sample
		rate    float64
	}{
		{"NoSample", nil, 0},
		{"OneSampleNoRate", []sample{{100, 1000, 0}}, 0},
		{"SecondSampleIsTheRate", []sample{{0, 1000, 0}, {200, 1000, 500 * ms}}, 400},
		{"MovingAverage", []sample{{0, 1e6, 0}, {1000, 1e6, time.Second}, {4000, 1e6, 2 * time.Second}},
			1000 + (1-0.716531310573789)*(3000-1000)}, // 1 - e^(-1/3)
		{"SameInstantIgnored", []sample{{0, 1000, 0}, {200, 1000, time.Second}, {500, 1000, time.Second}}, 200},
		{"FewerBytesIgnored", []sample{{0, 1000, 0}, {200, 1000, time.Second}, {100, 1000, 2 * time.Second}}, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := feed(c.samples)
			require.InDelta(t, c.rate, m.Rate, 1e-9)
			if n := len(c.samples); n > 0 {
				last := c.samples[n-1]
				require.Equal(t, last.done, m.Done)
				require.Equal(t, epoch.Add(last.at), m.Sampled)
				require.Equal(t, epoch.Add(c.samples[0].at), m.FirstSample)
			}
		})
	}
}

func TestMeterETA(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		samples []sample
		eta     time.Duration
		ok      bool
	}{
		{"NoRate", []sample{{0, 1000, 0}}, 0, false},
		{"UnderASecond", []sample{{0, 1000, 0}, {100, 1000, 900 * ms}}, 0, false},
		{"RoundsUp", []sample{{0, 1000, 0}, {100, 1000, time.Second}}, 9 * time.Second, true},
		{"Fraction", []sample{{0, 1000, 0}, {300, 1000, time.Second}}, 3 * time.Second, true},
		{"Finished", []sample{{0, 1000, 0}, {1000, 1000, 2 * time.Second}}, 0, false},
		{"Stalled", []sample{{0, 1000, 0}, {0, 1000, 2 * time.Second}}, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			eta, ok := feed(c.samples).ETA()
			require.Equal(t, c.ok, ok)
			require.Equal(t, c.eta, eta)
		})
	}
}
