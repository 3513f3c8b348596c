package client

import (
	"context"
	"io"
	"time"
)

// Progress is told the bytes moved so far and the total, from the
// goroutine moving them (for an upload, one of net/http's, not the
// caller's): at most every ProgressInterval while bytes flow, and once more
// with done == total when the transfer succeeded. It must return quickly.
type Progress func(done, total int64)

// ProgressInterval is the least time between two progress calls.
const ProgressInterval = 100 * time.Millisecond

// Phase is the part of a transfer a PhaseProgress report is about.
type Phase uint8

const (
	// PhaseHashing is an upload's first read of the file, for its SHA-256;
	// done counts the bytes read, total is the file's size.
	PhaseHashing Phase = iota + 1
	// PhaseUploading is the PUT to the store; done counts the bytes sent.
	PhaseUploading
	// PhaseDownloading is the GET from the store; done counts the bytes
	// received, total is the artifact's size.
	PhaseDownloading
)

func (p Phase) String() string {
	switch p {
	case PhaseHashing:
		return "hashing"
	case PhaseUploading:
		return "uploading"
	case PhaseDownloading:
		return "downloading"
	}
	return "unknown"
}

// PhaseProgress is told, from the goroutine doing the work, which phase a
// transfer is in, the bytes of that phase done so far and its total: once
// when a phase starts (done == 0, or for a resumed transfer the bytes an
// earlier run left done), at most every ProgressInterval while bytes flow,
// and once with done == total when the phase completed. An upload reports
// PhaseHashing, then PhaseUploading (done starts again); registering the
// artifact follows the last PhaseUploading report. A multipart upload
// hashes each part just before sending it, so it reports PhaseUploading
// alone — after a PhaseHashing of the parts an interrupted run stored, when
// it resumes. A download reports PhaseDownloading. Reports of a transfer
// moved in parallel parts come from several goroutines, one at a time and
// in order. It must return quickly.
type PhaseProgress func(phase Phase, done, total int64)

// reporter is the meter callback of one phase: p (which hears only the
// bytes moved to or from the store, never the hash pass) and pp.
func reporter(phase Phase, p Progress, pp PhaseProgress) Progress {
	if phase == PhaseHashing {
		p = nil
	}
	switch {
	case pp == nil:
		return p
	case p == nil:
		return func(done, total int64) { pp(phase, done, total) }
	}
	return func(done, total int64) {
		p(done, total)
		pp(phase, done, total)
	}
}

// meter is a reader that counts what passes, reports progress, holds the
// average rate to a limit, and stops when its context ends.
type meter struct {
	ctx      context.Context
	r        io.Reader
	total    int64
	progress Progress
	rate     int64 // bytes per second; 0: unlimited

	done     int64
	start    time.Time
	reported time.Time
}

func newMeter(ctx context.Context, r io.Reader, total int64, progress Progress, rate int64) *meter {
	now := time.Now()
	return &meter{ctx: ctx, r: r, total: total, progress: progress, rate: max(rate, 0), start: now, reported: now}
}

func (m *meter) Read(p []byte) (int, error) {
	if m.ctx.Err() != nil {
		return 0, context.Cause(m.ctx)
	}
	if m.rate > 0 {
		// Small reads keep a limited transfer smooth: about twenty a second.
		p = p[:min(len(p), max(int(m.rate/20), 1<<10))]
	}
	n, err := m.r.Read(p)
	m.done += int64(n)
	if m.progress != nil && n > 0 {
		if now := time.Now(); now.Sub(m.reported) >= ProgressInterval {
			m.reported = now
			m.progress(m.done, m.total)
		}
	}
	if m.rate > 0 && n > 0 {
		if werr := m.hold(); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// hold waits until the average rate since the start is back at the limit.
func (m *meter) hold() error {
	due := m.start.Add(time.Duration(float64(m.done) / float64(m.rate) * float64(time.Second)))
	wait := time.Until(due)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-m.ctx.Done():
		return context.Cause(m.ctx)
	}
}

// finish reports completion.
func (m *meter) finish() {
	if m.progress != nil {
		m.progress(m.total, m.total)
	}
}
