package transfer

import (
	"sync"
	"time"
)

// Inflight counts the goroutines of running transfers, so that closing
// can wait for them to remove their part files. A transfer's Cmd that
// starts after CloseWithin does nothing.
type Inflight struct {
	mu     sync.Mutex
	closed bool
	n      int
	done   chan struct{} // closed when closed and n is 0
}

// NewInflight returns an open tracker.
func NewInflight() *Inflight { return &Inflight{done: make(chan struct{})} }

// enter registers a starting goroutine; false after CloseWithin.
func (f *Inflight) enter() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.n++
	return true
}

func (f *Inflight) leave() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n--
	if f.n == 0 && f.closed {
		close(f.done)
	}
}

// CloseWithin refuses new goroutines and waits at most d for the running
// ones. Safe to call twice.
func (f *Inflight) CloseWithin(d time.Duration) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	if f.n == 0 {
		close(f.done)
	}
	f.mu.Unlock()
	t := time.NewTimer(max(time.Millisecond, d))
	defer t.Stop()
	select {
	case <-f.done:
	case <-t.C:
	}
}
