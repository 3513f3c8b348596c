//go:build unix

package ptyshell

import (
	"errors"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// errCanceled is what a cancelled stdinReader's Read returns.
var errCanceled = errors.New("ptyshell: stdin read cancelled")

// stdinReader reads a terminal descriptor so that a pending Read can be
// cancelled without consuming a byte: it polls the descriptor together with
// a pipe that Cancel writes to, prefers the pipe, and reads only what poll
// reported ready.
type stdinReader struct {
	fd       int
	pr, pw   *os.File
	prFd     int
	canceled atomic.Bool
}

func newStdinReader(fd uintptr) (*stdinReader, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &stdinReader{fd: int(fd), pr: pr, pw: pw, prFd: int(pr.Fd())}, nil
}

// Read blocks until input is ready or Cancel is called. It returns io.EOF
// at end of input and errCanceled once cancelled.
func (r *stdinReader) Read(p []byte) (int, error) {
	for {
		if r.canceled.Load() {
			return 0, errCanceled
		}
		fds := []unix.PollFd{{Fd: int32(r.fd), Events: unix.POLLIN}, {Fd: int32(r.prFd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return 0, err
		}
		if fds[1].Revents != 0 || r.canceled.Load() {
			return 0, errCanceled
		}
		if fds[0].Revents&unix.POLLNVAL != 0 {
			return 0, os.ErrClosed
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(r.fd, p)
		switch {
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// Cancel makes the pending and every later Read return errCanceled.
func (r *stdinReader) Cancel() {
	r.canceled.Store(true)
	_, _ = r.pw.Write([]byte{0}) // a full pipe already wakes the poll
}

// Close releases the pipe; call it after the reading goroutine returned.
func (r *stdinReader) Close() error {
	return errors.Join(r.pr.Close(), r.pw.Close())
}

// notifyResize delivers SIGWINCH to ch.
func notifyResize(ch chan<- os.Signal) { signal.Notify(ch, syscall.SIGWINCH) }

// notifyLeave delivers the signals that make a Terminal leave.
func notifyLeave(ch chan<- os.Signal) { signal.Notify(ch, syscall.SIGTERM, syscall.SIGHUP) }
