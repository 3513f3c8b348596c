package common

import (
	"math"
	"time"
)

// TransferKind is what a transfer does.
type TransferKind uint8

const (
	// Upload stores a local file as a new artifact.
	Upload TransferKind = iota + 1
	// Replace stores a local file as an artifact's new content.
	Replace
	// Download writes an artifact's content to a local file.
	Download
)

// Phase is where a transfer is (TUI.md §1.6).
type Phase uint8

const (
	PhaseQueued Phase = iota + 1
	PhaseHashing
	PhaseUploading
	PhaseRegistering
	PhaseDownloading
	PhaseDone
	PhaseFailed
	PhaseCancelled
)

func (p Phase) String() string {
	return [...]string{"", "queued", "hashing", "uploading", "registering", "downloading", "done", "failed", "cancelled"}[p]
}

// Finished reports a phase that no longer moves.
func (p Phase) Finished() bool { return p >= PhaseDone }

// Running reports a phase that moves bytes or waits on the server.
func (p Phase) Running() bool { return p > PhaseQueued && p < PhaseDone }

// Transfer is one upload, replace or download as screens read it. Only
// the root model writes it.
type Transfer struct {
	ID   int
	Kind TransferKind
	// WorkspaceID and ArtifactID name the target; an upload has its
	// artifact ID only once registered.
	WorkspaceID, ArtifactID string
	Name                    string // the artifact's name
	Path                    string // the local file
	Phase                   Phase
	Done, Total             int64
	// Rate is bytes per second, an exponentially weighted average over
	// about 3 s of samples; 0 until two samples arrived.
	Rate float64
	// Queued, Started and Ended are model times; FirstSample is the
	// stamp of the first progress sample (ETA shows from a second after).
	Queued, Started, Ended time.Time
	FirstSample, Sampled   time.Time
	// Err is the one sentence of a failure.
	Err string
	// Lingering: finished less than 5 s ago, so the tray still shows it.
	Lingering bool
	// Cancelling: cancel was asked; the reply is awaited.
	Cancelling bool
}

// Up reports a transfer that moves bytes to the store.
func (t *Transfer) Up() bool { return t.Kind != Download }

// Fraction is how far the bytes are, 0–1.
func (t *Transfer) Fraction() float64 {
	switch {
	case t.Phase == PhaseDone:
		return 1
	case t.Total <= 0:
		return 0
	}
	return min(1, float64(t.Done)/float64(t.Total))
}

// ETA is the time left at the current rate; ok is false for the first
// second of samples or without a rate.
func (t *Transfer) ETA() (time.Duration, bool) {
	if t.Rate <= 0 || t.Sampled.Sub(t.FirstSample) < time.Second || t.Total <= t.Done {
		return 0, false
	}
	secs := float64(t.Total-t.Done) / t.Rate
	return time.Duration(math.Ceil(secs)) * time.Second, true
}

// Duration is how long the transfer ran (until now if it still runs).
func (t *Transfer) Duration(now time.Time) time.Duration {
	switch {
	case t.Started.IsZero():
		return 0
	case t.Phase.Finished():
		return t.Ended.Sub(t.Started)
	}
	return now.Sub(t.Started)
}

// Sample applies one progress sample: bytes, the moving average of the
// rate over about 3 s, and the phase the sample implies (an upload whose
// bytes are all sent is registering).
func (t *Transfer) Sample(done, total int64, at time.Time) {
	if !t.Phase.Running() {
		return // a sample arriving after the reply changes nothing
	}
	if t.FirstSample.IsZero() {
		t.FirstSample = at
	} else if dt := at.Sub(t.Sampled).Seconds(); dt > 0 && done >= t.Done {
		inst := float64(done-t.Done) / dt
		if t.Rate == 0 {
			t.Rate = inst
		} else {
			t.Rate += (1 - math.Exp(-dt/3)) * (inst - t.Rate)
		}
	}
	t.Done, t.Total, t.Sampled = done, total, at
	switch {
	case t.Kind == Download:
		t.Phase = PhaseDownloading
	case done >= total:
		t.Phase = PhaseRegistering
	default:
		t.Phase = PhaseUploading
	}
}
