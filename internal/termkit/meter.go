package termkit

import (
	"math"
	"time"
)

// rateWindow is the time constant of the rate's moving average.
const rateWindow = 3 * time.Second

// etaAfter is how long samples must span before ETA answers.
const etaAfter = time.Second

// Meter follows one transfer from timestamped progress samples: bytes,
// rate and time left. It never reads the clock: every time is a
// sample's, so the same samples give the same answers. The zero Meter
// has seen no sample. It is not safe for concurrent use.
type Meter struct {
	// Done and Total are the bytes of the latest sample.
	Done, Total int64
	// Rate is bytes per second, an exponentially weighted average with a
	// time constant of about 3 s; 0 until two samples arrived.
	Rate float64
	// FirstSample and Sampled are the times of the first and the latest
	// sample.
	FirstSample, Sampled time.Time
}

// Sample records done of total bytes at time at. A sample no later than
// the previous one, or with fewer bytes, moves Done and Total but leaves
// the rate as it was.
func (m *Meter) Sample(done, total int64, at time.Time) {
	if m.FirstSample.IsZero() {
		m.FirstSample = at
	} else if dt := at.Sub(m.Sampled).Seconds(); dt > 0 && done >= m.Done {
		inst := float64(done-m.Done) / dt
		if m.Rate == 0 {
			m.Rate = inst
		} else {
			m.Rate += (1 - math.Exp(-dt/rateWindow.Seconds())) * (inst - m.Rate)
		}
	}
	m.Done, m.Total, m.Sampled = done, total, at
}

// ETA is the time left at the current rate, rounded up to whole seconds;
// ok is false until the samples span a second, without a rate, and once
// Done reaches Total.
func (m *Meter) ETA() (time.Duration, bool) {
	if m.Rate <= 0 || m.Sampled.Sub(m.FirstSample) < etaAfter || m.Total <= m.Done {
		return 0, false
	}
	secs := float64(m.Total-m.Done) / m.Rate
	return time.Duration(math.Ceil(secs)) * time.Second, true
}
