package holder

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/ptyshell"
)

// ptyStream is the user's shell on a local PTY: the ptyshell.Stream a Hub
// drives in the holder. The process runs in a session of its own, so a
// stop reaches every process of its job control, not the shell alone.
type ptyStream struct {
	argv, env []string
	size      ptyshell.Size
	stopAfter time.Duration

	mu     sync.Mutex // held from the fork until pid is set: see reaper
	pid    int
	master *os.File

	exited    chan struct{}
	status    ptyshell.ExitStatus
	closeOnce sync.Once
}

var _ ptyshell.Stream = (*ptyStream)(nil)

func newPTYStream(argv, env []string, size ptyshell.Size, stopAfter time.Duration) *ptyStream {
	return &ptyStream{argv: argv, env: env, size: size, stopAfter: stopAfter, exited: make(chan struct{})}
}

// Start forks the shell on a new PTY of the start size. The shell's life
// is the holder's, not the start's context: Stop and Close end it.
func (p *ptyStream) Start(context.Context) error {
	cmd := exec.CommandContext(context.Background(), p.argv[0], p.argv[1:]...)
	cmd.Env = p.env
	p.mu.Lock()
	defer p.mu.Unlock()
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(p.size.Cols), Rows: uint16(p.size.Rows)})
	if err != nil {
		return err
	}
	p.pid, p.master = cmd.Process.Pid, master
	// The reaper collects the status with wait4; the handle is not needed.
	_ = cmd.Process.Release()
	return nil
}

// Read reads the terminal's output; the end of the last writer of the
// PTY's other side (EIO on Linux) is io.EOF.
func (p *ptyStream) Read(b []byte) (int, error) {
	n, err := p.master.Read(b)
	if err != nil && (errors.Is(err, syscall.EIO) || errors.Is(err, os.ErrClosed)) {
		err = io.EOF
	}
	if err == nil && n > 0 {
		n = p.more(b, n)
	}
	return n, err
}

// more tops b[n:] up with output the terminal holds already, never
// waiting. A terminal gives at most 4 KiB a read; topped up, a burst goes
// on as a few large chunks, and everything after the read — the screen,
// the connections, the relay, the server's bridge — pays per chunk, not
// per 4 KiB. Typing and its echo, which the terminal holds none of, go on
// at once.
func (p *ptyStream) more(b []byte, n int) int {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return n
	}
	for n < len(b) {
		got := 0
		_ = rc.Control(func(fd uintptr) { // fails only once the file is closed; then nothing is read
			ready := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, err := unix.Poll(ready, 0); err != nil || k == 0 || ready[0].Revents&unix.POLLIN == 0 {
				return
			}
			if m, err := unix.Read(int(fd), b[n:]); err == nil {
				got = m
			}
		})
		if got <= 0 {
			return n
		}
		n += got
	}
	return n
}

func (p *ptyStream) Write(b []byte) (int, error) { return p.master.Write(b) }

func (p *ptyStream) Resize(_ context.Context, size ptyshell.Size) error {
	return pty.Setsize(p.master, &pty.Winsize{Cols: uint16(size.Cols), Rows: uint16(size.Rows)})
}

func (p *ptyStream) Wait(ctx context.Context) (ptyshell.ExitStatus, error) {
	select {
	case <-p.exited:
		return p.status, nil
	case <-ctx.Done():
		return ptyshell.ExitStatus{}, ctx.Err()
	}
}

// Stop sends SIGHUP to the shell's session, then SIGKILL once the stop
// time has passed, and returns when the shell has exited or ctx is done.
func (p *ptyStream) Stop(ctx context.Context) error {
	p.signal(syscall.SIGHUP)
	t := time.NewTimer(p.stopAfter)
	defer t.Stop()
	select {
	case <-p.exited:
		return nil
	case <-t.C:
		p.signal(syscall.SIGKILL)
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-p.exited:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close kills what is left of the shell's session and closes the PTY,
// which unblocks Read.
func (p *ptyStream) Close() error {
	p.closeOnce.Do(func() {
		p.signal(syscall.SIGKILL)
		if p.master != nil {
			_ = p.master.Close() // nothing is left to flush
		}
	})
	return nil
}

// signal sends sig to the shell's process group unless the shell has
// exited (its pid could be another process's by now).
func (p *ptyStream) signal(sig syscall.Signal) {
	select {
	case <-p.exited:
		return
	default:
	}
	if p.pid > 0 {
		_ = syscall.Kill(-p.pid, sig) // the group may be empty already
	}
}

// foreground sends sig to the terminal's foreground process group — the
// job at the prompt, or the shell itself when none runs — as a terminal's
// own keys do, unless the shell has exited.
func (p *ptyStream) foreground(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return errShellExited
	default:
	}
	var pgrp int32
	rc, err := p.master.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, ioErr = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp)))
	}); err != nil {
		return err
	}
	if ioErr != 0 || pgrp <= 0 {
		pgrp = int32(p.pid) // the shell's own group, as signal does
	}
	return syscall.Kill(-int(pgrp), sig)
}

// reaped is the reaper's report of one child: the shell's status is kept;
// any other pid is an orphan the holder, as the container's first process,
// had to collect.
func (p *ptyStream) reaped(pid int, ws syscall.WaitStatus) {
	p.mu.Lock()
	shell := pid == p.pid
	p.mu.Unlock()
	if !shell {
		return
	}
	p.status = exitStatus(ws)
	close(p.exited)
}

func exitStatus(ws syscall.WaitStatus) ptyshell.ExitStatus {
	if ws.Signaled() {
		return ptyshell.ExitStatus{Code: 128 + int(ws.Signal())}
	}
	return ptyshell.ExitStatus{Code: ws.ExitStatus()}
}

// reapChildren collects every child that exits, as the first process of a
// container must (orphans of the shell's jobs are re-parented to it), and
// reports each to onExit, until ctx is done. The shell's own status reaches
// its stream this way too: nobody else waits for it.
func reapChildren(ctx context.Context, onExit func(pid int, ws syscall.WaitStatus)) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGCHLD)
	defer signal.Stop(sigs)
	for {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
			onExit(pid, ws)
		}
		select {
		case <-sigs:
		case <-ctx.Done():
			return
		}
	}
}
