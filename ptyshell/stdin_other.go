//go:build !unix

package ptyshell

import (
	"errors"
	"os"
	"os/signal"
)

var errCanceled = errors.New("ptyshell: stdin read cancelled")

// stdinReader is not available without poll(2): a Terminal needs a Unix
// terminal in v1.
type stdinReader struct{}

func newStdinReader(uintptr) (*stdinReader, error) {
	return nil, errors.New("ptyshell: the interactive shell needs a Unix terminal")
}

func (*stdinReader) Read([]byte) (int, error) { return 0, errCanceled }
func (*stdinReader) Cancel()                  {}
func (*stdinReader) Close() error             { return nil }

func notifyResize(chan<- os.Signal) {}

func notifyLeave(ch chan<- os.Signal) { signal.Notify(ch, os.Interrupt) }
