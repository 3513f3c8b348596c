// Package ptyshelltest holds fakes and helpers for tests of ptyshell and of
// the code around it (server/rest, client, tui): an in-memory Stream, a
// manual Clock, an httptest server running ptyshell.Serve, a raw frame
// client, and a scripted server for client-side tests.
package ptyshelltest

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/cairn-dev/cairn/ptyshell"
)

var _ ptyshell.Stream = (*Stream)(nil)

// ErrClosed is what a Stream's calls return after Close.
var ErrClosed = errors.New("ptyshelltest: stream closed")

// Stream is an in-memory ptyshell.Stream: a fake process behind a terminal.
// Its output is a pipe, so Print blocks until Serve has read everything,
// which is how a slow consumer pushes back on the process. Set the fields
// before handing it to Serve; drive it with the methods.
type Stream struct {
	// StartFunc, if set, runs in Start; an error fails the start. Use it to
	// hold the start until the test releases it.
	StartFunc func(ctx context.Context) error
	// StopFunc, if set, replaces Stop's default, which is Exit(StopCode).
	StopFunc func(ctx context.Context) error
	// Echo writes every input chunk back as output, as a terminal in echo
	// mode does.
	Echo bool
	// OnInput, if set, is called with each input chunk after it was
	// recorded and echoed; it can drive the process (Print, Exit).
	OnInput func(s *Stream, p []byte)
	// FailResizes makes the first N Resize calls fail.
	FailResizes int
	// StopCode is the status Stop exits with; zero means 129 (SIGHUP).
	StopCode int

	outR *io.PipeReader
	outW *io.PipeWriter

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every change
	started     bool
	early       bool
	input       bytes.Buffer
	resizeCalls int
	resizes     []ptyshell.Size
	stops       int
	closes      int
	exitSet     bool
	exitStatus  ptyshell.ExitStatus
	waitErr     error
	exitCh      chan struct{}
	closed      chan struct{}
	readBytes   int64
}

// NewStream returns a Stream that has not started.
func NewStream() *Stream {
	r, w := io.Pipe()
	return &Stream{outR: r, outW: w, changed: make(chan struct{}), exitCh: make(chan struct{}), closed: make(chan struct{})}
}

// Start runs StartFunc, then marks the stream started.
func (s *Stream) Start(ctx context.Context) error {
	if s.StartFunc != nil {
		if err := s.StartFunc(ctx); err != nil {
			return err
		}
	}
	s.update(func() { s.started = true })
	return nil
}

// Read reads the output that Print wrote; io.EOF after CloseOutput, Exit or
// Close.
func (s *Stream) Read(p []byte) (int, error) {
	n, err := s.outR.Read(p)
	s.update(func() { s.readBytes += int64(n) })
	if errors.Is(err, io.ErrClosedPipe) {
		err = io.EOF
	}
	return n, err
}

// Write records p as input, echoes it when Echo is set, then calls
// OnInput.
func (s *Stream) Write(p []byte) (int, error) {
	select {
	case <-s.closed:
		return 0, ErrClosed
	default:
	}
	s.update(func() {
		s.early = s.early || !s.started
		s.input.Write(p)
	})
	if s.Echo {
		if err := s.Print(p); err != nil {
			return 0, err
		}
	}
	if s.OnInput != nil {
		s.OnInput(s, p)
	}
	return len(p), nil
}

// Resize records size, failing the first FailResizes calls.
func (s *Stream) Resize(ctx context.Context, size ptyshell.Size) error {
	var err error
	s.update(func() {
		s.resizeCalls++
		if s.resizeCalls <= s.FailResizes {
			err = fmt.Errorf("resize %d: not ready", s.resizeCalls)
			return
		}
		s.resizes = append(s.resizes, size)
	})
	return err
}

// Wait blocks until Exit, SetExit or FailWait, ctx, or Close.
func (s *Stream) Wait(ctx context.Context) (ptyshell.ExitStatus, error) {
	select {
	case <-s.exitCh:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.exitStatus, s.waitErr
	case <-ctx.Done():
		return ptyshell.ExitStatus{}, ctx.Err()
	case <-s.closed:
		return ptyshell.ExitStatus{}, ErrClosed
	}
}

// Stop runs StopFunc, or ends the process with StopCode.
func (s *Stream) Stop(ctx context.Context) error {
	s.update(func() { s.stops++ })
	if s.StopFunc != nil {
		return s.StopFunc(ctx)
	}
	s.Exit(cmp.Or(s.StopCode, 129))
	return nil
}

// Close counts the call and unblocks everything: Print, Read and Wait.
func (s *Stream) Close() error {
	first := false
	s.update(func() {
		s.closes++
		first = s.closes == 1
	})
	if first {
		close(s.closed)
		_ = s.outW.CloseWithError(ErrClosed) // cannot fail
		_ = s.outR.Close()                   // cannot fail
	}
	return nil
}

// Print writes p to the output, blocking until Serve has read all of it.
func (s *Stream) Print(p []byte) error {
	_, err := s.outW.Write(p)
	if err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

// CloseOutput ends the output: Read returns io.EOF after what was printed.
func (s *Stream) CloseOutput() { _ = s.outW.Close() } // cannot fail

// FailRead makes Read fail with err after what was printed.
func (s *Stream) FailRead(err error) { _ = s.outW.CloseWithError(err) } // cannot fail

// SetExit makes Wait return st. Only the first of SetExit, Exit and
// FailWait counts.
func (s *Stream) SetExit(st ptyshell.ExitStatus) { s.resolve(st, nil) }

// FailWait makes Wait return err.
func (s *Stream) FailWait(err error) { s.resolve(ptyshell.ExitStatus{}, err) }

// Exit ends the process with code: the output ends, then Wait returns.
func (s *Stream) Exit(code int) {
	s.CloseOutput()
	s.SetExit(ptyshell.ExitStatus{Code: code})
}

func (s *Stream) resolve(st ptyshell.ExitStatus, err error) {
	s.update(func() {
		if s.exitSet {
			return
		}
		s.exitSet, s.exitStatus, s.waitErr = true, st, err
		close(s.exitCh)
	})
}

// Input returns a copy of all input written so far.
func (s *Stream) Input() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.input.Bytes())
}

// EarlyInput reports whether any input was written before Start returned.
func (s *Stream) EarlyInput() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.early
}

// Resizes returns the sizes applied so far, in order.
func (s *Stream) Resizes() []ptyshell.Size {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ptyshell.Size(nil), s.resizes...)
}

// ResizeCalls counts Resize calls, failed ones included.
func (s *Stream) ResizeCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resizeCalls
}

// Closes counts Close calls.
func (s *Stream) Closes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closes
}

// Stops counts Stop calls.
func (s *Stream) Stops() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stops
}

// ReadBytes counts the output bytes Serve has read.
func (s *Stream) ReadBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readBytes
}

// Started reports whether Start has succeeded.
func (s *Stream) Started() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started
}

// Closed is closed by the first Close.
func (s *Stream) Closed() <-chan struct{} { return s.closed }

// WaitUntil blocks until cond holds (checked after every change to the
// stream) or ctx ends.
func (s *Stream) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("stream: condition never held: %w", ctx.Err())
		}
	}
}

func (s *Stream) update(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f()
	close(s.changed)
	s.changed = make(chan struct{})
}
