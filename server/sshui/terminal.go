package sshui

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/ssh"
	"github.com/creack/pty"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/shell"
)

// terminal is a session's PTY on this machine. The TUI, and a shell it
// hands the terminal to, run on the slave exactly as on a local terminal
// (raw mode, the line discipline, the pause's cooked read); the master is
// pumped to and from the SSH channel. Its size follows the client's
// window changes, which no SIGWINCH reports in this process: they go to
// the program as messages and to a running shell through its Sizes.
type terminal struct {
	master, slave *os.File
	sess          ssh.Session

	resizes    chan tea.WindowSizeMsg // the program's, latest wins
	shellSizes chan ptyshell.Size     // the running shell's, latest wins
	hangup     chan os.Signal         // ends a running shell when the session ends

	lastInput atomic.Int64 // unix nanoseconds of the last keystroke
	now       func() time.Time
	output    sync.WaitGroup // pumpOutput
	input     sync.WaitGroup // pumpInput
}

// openTerminal opens the PTY at the client's window size and starts the
// pumps.
func openTerminal(sess ssh.Session, win ssh.Window, now func() time.Time) (*terminal, error) {
	master, slave, err := pty.Open()
	if err != nil {
		return nil, err
	}
	t := &terminal{master: master, slave: slave, sess: sess, now: now,
		resizes: make(chan tea.WindowSizeMsg, 1), shellSizes: make(chan ptyshell.Size, 1), hangup: make(chan os.Signal, 1)}
	t.setSize(win)
	t.lastInput.Store(now().UnixNano())
	t.output.Add(1)
	go t.pumpOutput()
	t.input.Add(1)
	go t.pumpInput()
	return t, nil
}

// pumpInput copies the client's keys to the PTY until the channel or the
// PTY closes.
func (t *terminal) pumpInput() {
	defer t.input.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := t.sess.Read(buf)
		if n > 0 {
			t.lastInput.Store(t.now().UnixNano())
			if _, werr := t.master.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// pumpOutput copies the PTY's output to the client until the slave is
// closed and drained. A client gone keeps it reading: a full PTY buffer
// would otherwise block the program writing to it.
func (t *terminal) pumpOutput() {
	defer t.output.Done()
	buf := make([]byte, 32<<10)
	gone := false
	for {
		n, err := t.master.Read(buf)
		if n > 0 && !gone {
			_, werr := t.sess.Write(buf[:n])
			gone = werr != nil
		}
		if err != nil {
			return // EIO: the slave is closed and nothing is left
		}
	}
}

// resize applies a window change to the PTY, the program and a running
// shell.
func (t *terminal) resize(win ssh.Window) {
	t.setSize(win)
	offer(t.resizes, tea.WindowSizeMsg{Width: win.Width, Height: win.Height})
	offer(t.shellSizes, ptyshell.Size{Cols: win.Width, Rows: win.Height}.Clamp())
}

func (t *terminal) setSize(win ssh.Window) {
	_ = pty.Setsize(t.master, &pty.Winsize{Rows: uint16(max(1, win.Height)), Cols: uint16(max(1, win.Width))}) //nolint:gosec // clamped by max; a window is far below 65535
}

// idleFor is how long the client has sent nothing.
func (t *terminal) idleFor() time.Duration {
	return t.now().Sub(time.Unix(0, t.lastInput.Load()))
}

// shellFactory is the TUI's shell Factory over this terminal: ptyshell's
// Terminal on the slave, its sizes from the window changes and a hang-up
// when the session ends, instead of this process's SIGWINCH and signals.
func (t *terminal) shellFactory(s *ptyshell.Session, o shell.Options) (shell.Command, error) {
	o.Sizes, o.Signals = t.shellSizes, t.hangup
	return shell.New(s, o)
}

// hangUp ends a running shell as a hang-up ends one locally.
func (t *terminal) hangUp() { offer(t.hangup, os.Signal(syscall.SIGHUP)) }

// closeSlave ends the program's terminal; the output pump sends what is
// left, then returns.
func (t *terminal) closeSlave() {
	_ = t.slave.Close()
	t.output.Wait()
}

// close releases the PTY; call it after the channel is closed, so the
// input pump's read has returned or will.
func (t *terminal) close() error {
	_ = t.slave.Close() // closed already after a program ran
	err := t.master.Close()
	t.input.Wait()
	t.output.Wait()
	return err
}

// offer puts v in ch (capacity 1), replacing what is there: the reader
// wants the latest size, never a queue of them. There is one writer.
func offer[T any](ch chan T, v T) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}
