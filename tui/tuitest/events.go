package tuitest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
)

// Events subscribes through the fake server, except for a workspace's
// file changes (EventFilter.Files), which the fake server does not watch:
// FilesEventsFunc answers those, and without it such a subscription waits
// for ever, as one whose watcher never becomes ready, until it is closed.
func (b *Backend) Events(ctx context.Context, f cairn.EventFilter) (cairn.EventStream, error) {
	switch {
	case f.Files == "":
		return b.Client.Events(ctx, f)
	case b.FilesEventsFunc != nil:
		return b.FilesEventsFunc(ctx, f)
	}
	return NewFileStream(f), nil
}

// ScriptFileWatches makes every files subscription a FileStream the test
// drives, handed over on the returned channel as it is opened (up to
// 64 unread).
func (b *Backend) ScriptFileWatches() <-chan *FileStream {
	opened := make(chan *FileStream, 64)
	b.FilesEventsFunc = func(_ context.Context, f cairn.EventFilter) (cairn.EventStream, error) {
		s := NewFileStream(f)
		opened <- s
		return s, nil
	}
	return opened
}

// ErrStreamClosed is a FileStream's Next after Close.
var ErrStreamClosed = errors.New("tuitest: stream closed")

// FileStream is a scripted events stream: Next returns what Send and Fail
// queued, in order, then waits for more, for its context or for Close.
type FileStream struct {
	Filter cairn.EventFilter

	items  chan streamItem
	closed chan struct{}
	once   sync.Once

	mu    sync.Mutex
	nexts int
}

type streamItem struct {
	ev  cairn.Event
	err error
}

// New returns a stream of subscription f with nothing queued.
func NewFileStream(f cairn.EventFilter) *FileStream {
	return &FileStream{Filter: f, items: make(chan streamItem, 256), closed: make(chan struct{})}
}

// Send queues a frame; it panics past 256 unread, a test's mistake.
func (s *FileStream) Send(ev cairn.Event) { s.queue(streamItem{ev: ev}) }

// Fail queues an error, as the client's Next returns one.
func (s *FileStream) Fail(err error) { s.queue(streamItem{err: err}) }

func (s *FileStream) queue(it streamItem) {
	select {
	case s.items <- it:
	default:
		panic("tuitest: FileStream: 256 items unread")
	}
}

// Next returns the next queued item.
func (s *FileStream) Next(ctx context.Context) (cairn.Event, error) {
	s.mu.Lock()
	s.nexts++
	s.mu.Unlock()
	select {
	case <-ctx.Done():
		return cairn.Event{}, ctx.Err()
	case <-s.closed:
		return cairn.Event{}, ErrStreamClosed
	case it := <-s.items:
		return it.ev, it.err
	}
}

// Close ends the stream; it is idempotent.
func (s *FileStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

// Nexts is how many times Next was called.
func (s *FileStream) Nexts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nexts
}

// WaitClosed fails t unless the stream is closed within d.
func (s *FileStream) WaitClosed(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(d):
		t.Fatalf("the subscription to %s was not closed within %s", s.Filter.Files, d)
	}
}

// IsClosed reports whether Close was called.
func (s *FileStream) IsClosed() bool {
	select {
	case <-s.closed:
		return true
	default:
		return false
	}
}
