package tuitest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/cairn-dev/cairn"
)

// Source is a scripted events stream: a test sends hello, change frames
// (numbered per connection), resync frames and disconnects, and the pump
// reads them in order. It meets cairn.EventService.
type Source struct {
	ch chan item

	mu     sync.Mutex
	seq    int64
	opened int
}

type item struct {
	ev  cairn.Event
	err error
}

// NewSource returns a source that holds up to 1024 unread frames.
func NewSource() *Source { return &Source{ch: make(chan item, 1024)} }

// Events opens a subscription reading the source.
func (s *Source) Events(context.Context, cairn.EventFilter) (cairn.EventStream, error) {
	s.mu.Lock()
	s.opened++
	s.mu.Unlock()
	return &stream{src: s, done: make(chan struct{})}, nil
}

// Opened is how many subscriptions were opened.
func (s *Source) Opened() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.opened
}

// Hello starts a connection: seq begins again at 1.
func (s *Source) Hello(serverTime time.Time) {
	s.mu.Lock()
	s.seq = 0
	s.mu.Unlock()
	s.ch <- item{ev: cairn.Event{Type: cairn.EventHello, ServerTime: serverTime}}
}

// Emit sends a change frame with the next seq.
func (s *Source) Emit(ev cairn.Event) {
	s.mu.Lock()
	s.seq++
	ev.Seq = s.seq
	s.mu.Unlock()
	s.ch <- item{ev: ev}
}

// EmitRaw sends a frame as given (to test duplicates and gaps).
func (s *Source) EmitRaw(ev cairn.Event) { s.ch <- item{ev: ev} }

// Resync sends a resync frame.
func (s *Source) Resync() { s.ch <- item{ev: cairn.Event{Type: cairn.EventResync}} }

// Disconnect makes Next report a lost connection retried after retryIn.
func (s *Source) Disconnect(retryIn time.Duration, cause error) {
	if cause == nil {
		cause = errors.New("connection reset")
	}
	s.ch <- item{err: &cairn.DisconnectedError{RetryIn: retryIn, Err: cause}}
}

// Fail makes Next return err (a *cairn.Error 401 stops the pump).
func (s *Source) Fail(err error) { s.ch <- item{err: err} }

type stream struct {
	src  *Source
	once sync.Once
	done chan struct{}
}

func (st *stream) Next(ctx context.Context) (cairn.Event, error) {
	select {
	case it := <-st.src.ch:
		return it.ev, it.err
	case <-ctx.Done():
		return cairn.Event{}, ctx.Err()
	case <-st.done:
		return cairn.Event{}, errors.New("stream closed")
	}
}

func (st *stream) Close() error {
	st.once.Do(func() { close(st.done) })
	return nil
}
