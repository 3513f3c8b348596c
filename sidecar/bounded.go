package sidecar

import "bytes"

// BoundedBuffer keeps the first Max bytes written to it and drops the rest:
// what a sidecar or a browse container prints is kept for the log and the
// error text, never without a bound.
type BoundedBuffer struct {
	Max int
	buf bytes.Buffer
}

// Write keeps what fits and reports all of p written, so that a copy into
// it goes on to the end of its stream.
func (b *BoundedBuffer) Write(p []byte) (int, error) {
	b.Keep(p)
	return len(p), nil
}

// Keep is Write, which never fails.
func (b *BoundedBuffer) Keep(p []byte) {
	if room := b.Max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
}

// Bytes returns what was kept; it aliases the buffer until the next Write.
func (b *BoundedBuffer) Bytes() []byte { return b.buf.Bytes() }

// Len is the number of bytes kept.
func (b *BoundedBuffer) Len() int { return b.buf.Len() }

// String returns what was kept as a string.
func (b *BoundedBuffer) String() string { return b.buf.String() }
