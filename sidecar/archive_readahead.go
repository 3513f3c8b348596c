package sidecar

import (
	"errors"
	"io"
	"sync"
)

// Shape of a read-ahead: chunks in flight, and their size.
const (
	readAheadDepth = 4
	readAheadChunk = 256 << 10
)

// readAhead reads r on a goroutine of its own, a few chunks ahead of the
// consumer, so that the network's reads and the digest (whatever r does)
// run beside the decompression instead of between its steps: a tar.gz
// unpack is otherwise one thread doing everything `curl | gzip -d | tar x`
// spreads over three processes. Memory: (depth + 1) × chunk, 1.25 MiB.
type readAhead struct {
	chunks chan []byte
	free   chan []byte
	stop   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	err    error // the producer's last error; read after chunks is closed

	base, cur []byte // the chunk being consumed, whole and what is left
}

func newReadAhead(r io.Reader) *readAhead {
	ra := &readAhead{chunks: make(chan []byte, readAheadDepth), free: make(chan []byte, readAheadDepth+1),
		stop: make(chan struct{})}
	for range readAheadDepth + 1 {
		ra.free <- make([]byte, readAheadChunk)
	}
	ra.wg.Add(1)
	go ra.fill(r)
	return ra
}

func (ra *readAhead) fill(r io.Reader) {
	defer ra.wg.Done()
	defer close(ra.chunks)
	for {
		var buf []byte
		select {
		case buf = <-ra.free:
		case <-ra.stop:
			return
		}
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			select {
			case ra.chunks <- buf[:n]:
			case <-ra.stop:
				return
			}
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = io.EOF
		}
		if err != nil {
			ra.err = err
			return
		}
	}
}

// next moves to the next chunk, false at the end.
func (ra *readAhead) next() bool {
	if ra.base != nil {
		ra.free <- ra.base[:cap(ra.base)]
		ra.base, ra.cur = nil, nil
	}
	buf, ok := <-ra.chunks
	if ok {
		ra.base, ra.cur = buf, buf
	}
	return ok
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if !ra.next() {
			return 0, ra.err
		}
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// close stops the producer and waits for it; after it, what the producer
// recorded (in r too) may be read. It may be called more than once.
func (ra *readAhead) close() {
	ra.once.Do(func() { close(ra.stop) })
	ra.wg.Wait()
}
