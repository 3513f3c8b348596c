package client

import (
	"context"
	"io"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// PartProgress is told, for a transfer cut in parts (a multipart upload, a
// ranged download), how many parts are complete and how many there are:
// once when the transfer starts (done counts the parts an interrupted run
// left complete), then each time a part completes. It is called from the
// goroutine that completed the part, never concurrently with another call
// of the same transfer's, and must return quickly.
type PartProgress func(done, total int)

// flow is the meter of a transfer that several goroutines move at once:
// it counts the bytes they all move, reports their sum as progress (one
// report at a time, in order), holds their average rate to a limit, and
// counts the parts they complete.
type flow struct {
	ctx      context.Context
	total    int64
	progress Progress
	rate     int64 // bytes per second; 0: unlimited
	onPart   PartProgress

	mu         sync.Mutex
	done       int64
	start      time.Time
	startDone  int64 // bytes there before this run: not held to the rate
	reported   time.Time
	parts      int
	partsTotal int
}

// newFlow starts a meter at done of total bytes and parts of partsTotal
// parts, and reports both.
func newFlow(ctx context.Context, done, total int64, parts, partsTotal int, o flowOptions) *flow {
	now := time.Now()
	f := &flow{ctx: ctx, total: total, progress: o.progress, rate: max(o.rate, 0), onPart: o.parts,
		done: done, start: now, startDone: done, reported: now, parts: parts, partsTotal: partsTotal}
	if f.onPart != nil {
		f.onPart(parts, partsTotal)
	}
	return f
}

// flowOptions are the caller's callbacks and limit for a flow.
type flowOptions struct {
	progress Progress
	parts    PartProgress
	rate     int64
}

// add counts n bytes moved and, under a rate limit, waits until the
// average since the start is back at the limit.
func (f *flow) add(n int64) error {
	f.mu.Lock()
	f.done += n
	if now := time.Now(); f.progress != nil && now.Sub(f.reported) >= ProgressInterval {
		f.reported = now
		f.progress(f.done, f.total)
	}
	var due time.Time
	if f.rate > 0 {
		due = f.start.Add(time.Duration(float64(f.done-f.startDone) / float64(f.rate) * float64(time.Second)))
	}
	f.mu.Unlock()
	if wait := time.Until(due); f.rate > 0 && wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-f.ctx.Done():
			return context.Cause(f.ctx)
		}
	}
	return nil
}

// takeBack uncounts the n bytes of a failed attempt, which will be moved
// again.
func (f *flow) takeBack(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done -= n
}

// partDone counts one complete part.
func (f *flow) partDone() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.parts++
	if f.onPart != nil {
		f.onPart(f.parts, f.partsTotal)
	}
}

// finish reports completion.
func (f *flow) finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.progress != nil {
		f.progress(f.total, f.total)
	}
}

// reader returns a reader of r whose bytes count in the flow.
func (f *flow) reader(r io.Reader) *flowReader { return &flowReader{f: f, r: r} }

// flowReader is one goroutine's share of a flow: it stops when the flow's
// context ends and remembers how many bytes it moved, so that a failed
// attempt can take them back.
type flowReader struct {
	f *flow
	r io.Reader
	n int64
}

func (r *flowReader) Read(p []byte) (int, error) {
	if r.f.ctx.Err() != nil {
		return 0, context.Cause(r.f.ctx)
	}
	if r.f.rate > 0 {
		// Small reads keep a limited transfer smooth, as meter's do.
		p = p[:min(len(p), max(int(r.f.rate/20), 1<<10))]
	}
	n, err := r.r.Read(p)
	if n > 0 {
		r.n += int64(n)
		if werr := r.f.add(int64(n)); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// undo takes this reader's bytes back from the flow.
func (r *flowReader) undo() {
	r.f.takeBack(r.n)
	r.n = 0
}

// eachParallel calls fn for each item, in order, on at most n goroutines
// at once, and waits for them; the first error cancels the context the
// others run under and is the one returned.
func eachParallel[T any](ctx context.Context, n int, items []T, fn func(ctx context.Context, item T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(n, 1))
	for _, item := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, item) })
	}
	err := g.Wait()
	if err == nil && ctx.Err() != nil {
		// Stopped before every item ran, without an error of fn's.
		return context.Cause(ctx)
	}
	return err
}
