package stack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// stopGrace is how long a child gets to exit after its polite stop signal
// before it is killed.
const stopGrace = 10 * time.Second

// process is one running child. Its output goes to the caller's log and to a
// short tail kept for error messages; a goroutine owned by the process waits
// for it, and done closes when it has exited.
type process struct {
	name string
	cmd  *exec.Cmd
	tail *tailBuffer
	done chan struct{}
	err  error // the result of Wait; read only after done is closed

	mu      sync.Mutex // serialises stop and kill
	stopped bool
}

// startProcess starts cmd, which must not have been started, with output to
// log and SIGKILL as its parent-death signal, so a child never outlives the
// process that started it.
func startProcess(name string, cmd *exec.Cmd, log io.Writer) (*process, error) {
	if log == nil {
		log = io.Discard
	}
	tail := &tailBuffer{max: 4 << 10}
	out := io.MultiWriter(log, tail)
	cmd.Stdout, cmd.Stderr = out, out // the same writer: exec serialises its writes
	// A postmaster's backends may hold the output pipe a moment after it dies;
	// do not let Wait hang on them.
	cmd.WaitDelay = 2 * time.Second
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, tail: tail, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exitError describes an exit that nobody asked for, with the end of the
// child's output.
func (p *process) exitError() error {
	status := "exit status 0"
	if p.err != nil {
		status = p.err.Error()
	}
	return fmt.Errorf("%s exited: %s\n%s", p.name, status, p.tail.String())
}

// stop sends sig, waits up to grace for the child to exit, then kills it. It
// is idempotent, and returns an error only when the child had to be killed.
func (p *process) stop(sig os.Signal, grace time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil
	}
	p.stopped = true
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(grace):
	}
	_ = p.cmd.Process.Kill() // ErrProcessDone only: it may exit in between
	<-p.done
	return fmt.Errorf("stop %s: no exit within %s after %v: %w", p.name, grace, sig, errKilled)
}

// errKilled is stop's error when the child outlived its grace.
var errKilled = errors.New("killed")

// kill ends the child at once with SIGKILL and waits for it. Idempotent.
func (p *process) kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	_ = p.cmd.Process.Kill() // ErrProcessDone only
	<-p.done
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(b), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(bytes.ToValidUTF8(t.buf, nil)))
}
