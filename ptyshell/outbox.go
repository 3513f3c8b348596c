package ptyshell

import "sync"

// outFrame is one item of the writer's queue: a data message, or the close
// frame that ends the writer.
type outFrame struct {
	msg       []byte
	close     bool
	closeCode int
	closeText string
}

// outbox is the single path to the socket: a bounded queue read by the one
// writer goroutine. Once sealed, nothing but the final frames handed to
// seal can enter it, so nothing ever follows EXIT.
type outbox struct {
	q       chan outFrame
	sealing chan struct{} // closed when seal begins; wakes blocked puts
	gone    <-chan struct{}

	mu     sync.Mutex // held by put while it sends, and by seal
	sealed bool
	once   sync.Once
}

// newOutbox returns a queue of size frames. gone is closed when the writer
// has exited, so no put waits on a writer that will never read.
func newOutbox(size int, gone <-chan struct{}) *outbox {
	return &outbox{q: make(chan outFrame, size), sealing: make(chan struct{}), gone: gone}
}

// put enqueues msg, blocking while the queue is full. It returns false,
// without enqueuing, once the outbox is sealed or the writer is gone.
func (o *outbox) put(msg []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.sealed {
		return false
	}
	select {
	case o.q <- outFrame{msg: msg}:
		return true
	case <-o.sealing:
		return false
	case <-o.gone:
		return false
	}
}

// seal enqueues the final frames behind everything already queued and
// closes the queue. Every later put fails. Only the first call has an
// effect.
func (o *outbox) seal(final ...outFrame) {
	o.once.Do(func() {
		close(o.sealing)
		o.mu.Lock()
		defer o.mu.Unlock()
		o.sealed = true
		for _, f := range final {
			select {
			case o.q <- f:
			case <-o.gone:
			}
		}
		close(o.q)
	})
}

// isSealing reports whether seal has begun.
func (o *outbox) isSealing() <-chan struct{} { return o.sealing }
