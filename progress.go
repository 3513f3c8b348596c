package cairn

import "context"

// Progress is told how far a long operation has got: done of total bytes
// (total 0 when unknown). It must return quickly; the work waits for it.
type Progress func(done, total int64)

type progressKey struct{}

// WithProgress returns a context whose long operations — transfers
// between a volume and the store — report their progress to p. It is a
// request-scoped listener, as a front door's client asked for one.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// ProgressFrom returns the progress listener of ctx, or nil.
func ProgressFrom(ctx context.Context) Progress {
	p, _ := ctx.Value(progressKey{}).(Progress)
	return p
}
