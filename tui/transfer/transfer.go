package transfer

import (
	"time"

	"github.com/cairn-dev/cairn/internal/termkit"
)

// Kind is what a transfer does.
type Kind uint8

const (
	// Upload stores a local file as a new artifact.
	Upload Kind = iota + 1
	// Replace stores a local file as an artifact's new content.
	Replace
	// Download writes an artifact's content to a local file.
	Download
)

// Phase is where a transfer is, as the tray and the transfers screen show
// it.
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
	Kind Kind
	// WorkspaceID and ArtifactID name the target; an upload has its
	// artifact ID only once registered.
	WorkspaceID, ArtifactID string
	Name                    string // the artifact's name
	Path                    string // the local file
	Phase                   Phase
	// Meter is the bytes, rate and ETA of the current phase's samples
	// (hashing, then uploading, each from zero).
	termkit.Meter
	// Parts of PartsTotal parts are complete: a multipart upload or a
	// ranged download (PartsTotal is 0 for a transfer in one piece).
	Parts, PartsTotal int
	// Queued, Started and Ended are model times.
	Queued, Started, Ended time.Time
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

// Sample applies one progress sample: bytes and rate, and the phase the
// sample implies — hashing while the file is read for its digest, then
// uploading (registering once every byte is sent), or downloading. A new
// phase starts its meter over: its bytes count from zero again.
func (t *Transfer) Sample(hashing bool, done, total int64, at time.Time) {
	if !t.Phase.Running() {
		return // a sample arriving after the reply changes nothing
	}
	phase := PhaseDownloading
	switch {
	case t.Kind == Download:
	case hashing:
		phase = PhaseHashing
	case done >= total:
		phase = PhaseRegistering
	default:
		phase = PhaseUploading
	}
	sent := t.Phase == PhaseUploading && phase == PhaseRegistering // the same bytes, all sent
	if phase != t.Phase && !sent {
		t.Meter = termkit.Meter{}
	}
	t.Phase = phase
	t.Meter.Sample(done, total, at)
}

// SampleParts applies a sample's parts; a sample without them (a
// transfer in one piece, or before its first part report) keeps the last.
func (t *Transfer) SampleParts(done, total int) {
	if t.Phase.Running() && total > 0 {
		t.Parts, t.PartsTotal = done, total
	}
}
