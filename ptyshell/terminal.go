package ptyshell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"golang.org/x/term"
)

// ErrNotTerminal is what Run returns when stdin or stdout is not a
// terminal.
var ErrNotTerminal = errors.New("a shell needs a terminal")

// ErrInterrupted is matched by Run's error when SIGTERM or SIGHUP made the
// Terminal leave.
var ErrInterrupted = errors.New("ptyshell: interrupted by a signal")

// TerminalOptions configures a Terminal.
type TerminalOptions struct {
	// Workspace names the workspace in the banner.
	Workspace string
	// DetachKey is the key that leaves the shell, as ParseDetachKey reads
	// it: "" for Ctrl-], "none" for no key.
	DetachKey string
	// PauseOnExit waits for Enter after a non-zero status or a lost
	// connection, so the last screen stays readable.
	PauseOnExit bool
	// Sizes, if set, replaces SIGWINCH and term.GetSize as the source of
	// terminal sizes (tests).
	Sizes <-chan Size
	// Signals, if set, replaces the SIGTERM and SIGHUP subscription (tests).
	Signals <-chan os.Signal
	// Clock drives the resize debounce (SystemClock).
	Clock Clock
	// Resumable is set for a v2 shell, which outlives the connection: the
	// banner says the detach key leaves it running, and the summary of a
	// detach or a lost connection says it can be reattached (ResumeHint)
	// rather than that the server ends it.
	Resumable  bool
	ResumeHint string // how to reattach, e.g. "cairn shell --attach ID"
}

// fdFile is what Run needs of stdin and stdout: a descriptor to check, put
// in raw mode and poll. *os.File satisfies it.
type fdFile interface {
	Fd() uintptr
}

// Terminal binds a Session to the local terminal: raw mode, resize, the
// detach key, and the terminal restored on every path. It has the four
// methods of Bubble Tea's ExecCommand, so the TUI passes it to tea.Exec;
// `cairn shell` calls Run directly. A Terminal runs once and owns its
// Session: Run closes it.
type Terminal struct {
	session   *Session
	opts      TerminalOptions
	detachKey byte
	detach    bool
	clock     Clock
	stdin     io.Reader
	stdout    io.Writer

	mu     sync.Mutex
	ran    bool
	result Result
}

// NewTerminal returns a Terminal for s, reading os.Stdin and writing
// os.Stdout unless SetStdin and SetStdout say otherwise. It fails only for
// an invalid DetachKey.
func NewTerminal(s *Session, opts TerminalOptions) (*Terminal, error) {
	key, enabled, err := ParseDetachKey(opts.DetachKey)
	if err != nil {
		return nil, err
	}
	clock := opts.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	return &Terminal{session: s, opts: opts, detachKey: key, detach: enabled, clock: clock, stdin: os.Stdin, stdout: os.Stdout}, nil
}

// SetStdin sets the terminal to read keys from; it must be a terminal with
// a descriptor (an *os.File). Nil keeps the current one.
func (t *Terminal) SetStdin(r io.Reader) {
	if r != nil {
		t.stdin = r
	}
}

// SetStdout sets the terminal to write output to; it must be a terminal
// with a descriptor. Nil keeps the current one.
func (t *Terminal) SetStdout(w io.Writer) {
	if w != nil {
		t.stdout = w
	}
}

// SetStderr exists for Bubble Tea's ExecCommand; a Terminal writes
// everything, its own lines included, to stdout.
func (t *Terminal) SetStderr(io.Writer) {}

// Result says how the session ended, once Run has returned.
func (t *Terminal) Result() Result {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.result
}

// Starting is the line Run shows after the banner until the container
// runs (STATUS running); then it is erased (eraseLine).
const Starting = "starting container…"

// eraseLine returns to the start of the line and clears it.
const eraseLine = "\r\x1b[2K"

// Banner is the line Run prints before entering raw mode.
func (t *Terminal) Banner() string {
	ws := t.opts.Workspace
	if ws == "" {
		ws = "workspace"
	}
	b := fmt.Sprintf("cairn shell ▸ %s (/mnt/cairn/ws)", ws)
	switch {
	case t.detach && t.opts.Resumable:
		b += " — " + detachKeyName(t.detachKey) + " detaches; the shell keeps running"
	case t.detach:
		b += " — " + detachKeyName(t.detachKey) + " ends the session"
	}
	return b
}

// Run runs the shell on the terminal until it exits, the user detaches,
// the connection is lost, or SIGTERM/SIGHUP arrives. It prints the banner,
// enters raw mode, pumps both ways, then restores the terminal, resets the
// modes a remote program may have left on, and prints the summary line —
// on every path, a panic included (re-raised after the restore). When it
// returns, no goroutine of it is still reading stdin.
//
// It returns nil if EXIT arrived or the user detached; ErrNotTerminal
// without a terminal; a *LostError (matching ErrConnectionLost) when the
// connection ended without EXIT; an error matching ErrInterrupted after a
// signal; otherwise an error wrapping what failed. Result has the details.
func (t *Terminal) Run() error {
	defer func() { _ = t.session.Close() }() // idempotent; always returns nil
	t.mu.Lock()
	ran := t.ran
	t.ran = true
	t.mu.Unlock()
	if ran {
		return errors.New("ptyshell: a Terminal runs once")
	}
	in, inOK := t.stdin.(fdFile)
	out, outOK := t.stdout.(fdFile)
	if !inOK || !outOK || !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return ErrNotTerminal
	}
	reader, err := newStdinReader(in.Fd())
	if err != nil {
		return fmt.Errorf("stdin: %w", err)
	}
	defer func() { _ = reader.Close() }() // pipe descriptors only
	signals := t.opts.Signals
	if signals == nil {
		ch := make(chan os.Signal, 1)
		notifyLeave(ch)
		defer signal.Stop(ch)
		signals = ch
	}
	if _, err := fmt.Fprint(t.stdout, t.Banner()+"\r\n"+Starting); err != nil {
		return fmt.Errorf("terminal output: %w", err)
	}
	state, err := term.MakeRaw(int(in.Fd()))
	if err != nil {
		return fmt.Errorf("raw mode: %w", err)
	}
	var end endEvent
	defer func() { t.leave(int(in.Fd()), state, end) }()
	end = t.pump(reader, int(out.Fd()), signals)
	return end.err
}

// endEvent is how the pumps ended: the first goroutine to finish says why.
type endEvent struct {
	kind   endKind
	err    error
	signal os.Signal
	panic  any
}

type endKind int

const (
	endSession endKind = iota // EXIT arrived or the connection ended
	endDetach                 // the detach key
	endSignal                 // SIGTERM or SIGHUP
	endStdin                  // stdin failed or ended
	endOutput                 // writing the terminal failed
	endPanic                  // a goroutine panicked
)

// pump runs the stdin reader, the output writer, the size watcher and the
// signal watch until the first one ends, then stops all of them and waits:
// the stdin reader is cancelled, the session closed.
func (t *Terminal) pump(reader *stdinReader, outFd int, signals <-chan os.Signal) endEvent {
	ends := make(chan endEvent, 4) // each goroutine sends at most once
	stop := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	run := func(f func() endEvent) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					ends <- endEvent{kind: endPanic, panic: p}
				}
			}()
			if e, ok := nonZero(f()); ok {
				ends <- e
			}
		}()
	}
	run(func() endEvent { return t.readStdin(reader) })
	run(func() endEvent { return t.writeOutput(ctx) })
	run(func() endEvent { t.watchSize(stop, outFd); return endEvent{kind: -1} })
	run(func() endEvent {
		select {
		case sig := <-signals:
			return endEvent{kind: endSignal, signal: sig}
		case <-stop:
			return endEvent{kind: -1}
		}
	})
	first := <-ends
	reader.Cancel()
	close(stop)
	_ = t.session.Close() // sends close 1000 unless the session is over; always nil
	cancel()
	wg.Wait()
	first.err = t.finalErr(first)
	return first
}

// nonZero drops the "nothing to report" event of goroutines that only
// stop.
func nonZero(e endEvent) (endEvent, bool) { return e, e.kind >= 0 }

// readStdin forwards keys as INPUT, one read (up to 32 KiB) per frame. A
// read that is exactly the detach key ends the session; the same byte in a
// longer read, such as a paste, is data.
func (t *Terminal) readStdin(reader *stdinReader) endEvent {
	buf := make([]byte, MaxDataPayload)
	for {
		n, err := reader.Read(buf)
		if errors.Is(err, errCanceled) {
			return endEvent{kind: -1}
		}
		if err != nil {
			return endEvent{kind: endStdin, err: err}
		}
		if t.detach && n == 1 && buf[0] == t.detachKey {
			return endEvent{kind: endDetach}
		}
		if _, err := t.session.Write(buf[:n]); err != nil {
			return endEvent{kind: -1} // the session is over; the output side says how
		}
	}
}

// writeOutput writes OUTPUT straight to the terminal, so a slow terminal
// slows the reading, erases the Starting line once the container runs,
// rings the bell on NOTICE and ends on EXIT or when the connection does.
func (t *Terminal) writeOutput(ctx context.Context) endEvent {
	starting := true
	for {
		m, err := t.session.Next(ctx)
		if err != nil {
			return endEvent{kind: endSession}
		}
		var werr error
		if starting && (m.Type == FrameOutput || (m.Type == FrameStatus && m.Status.State == StateRunning)) {
			starting = false
			_, werr = io.WriteString(t.stdout, eraseLine)
		}
		switch {
		case werr != nil:
		case m.Type == FrameOutput:
			_, werr = t.stdout.Write(m.Output)
		case m.Type == FrameNotice:
			_, werr = io.WriteString(t.stdout, "\a")
		case m.Type == FrameExit:
			return endEvent{kind: endSession}
		}
		if werr != nil {
			return endEvent{kind: endOutput, err: werr}
		}
	}
}

// watchSize sends RESIZE on every size change, at most once per
// ResizeInterval, latest size wins.
func (t *Terminal) watchSize(stop <-chan struct{}, outFd int) {
	sizes := t.opts.Sizes
	var winch chan os.Signal
	if sizes == nil {
		winch = make(chan os.Signal, 1)
		notifyResize(winch)
		defer signal.Stop(winch)
	}
	var (
		pending *Size
		timer   Timer
		last    Size
		sentAt  = t.clock.Now().Add(-ResizeInterval)
	)
	send := func(size Size) {
		sentAt = t.clock.Now()
		if size != last {
			last = size
			_ = t.session.Resize(size) // fails only once the session is over
		}
	}
	offer := func(size Size) {
		if timer == nil && t.clock.Now().Sub(sentAt) >= ResizeInterval {
			send(size)
			return
		}
		pending = &size
		if timer == nil {
			timer = t.clock.NewTimer(sentAt.Add(ResizeInterval).Sub(t.clock.Now()))
		}
	}
	for {
		select {
		case size := <-sizes:
			offer(size)
		case <-winch:
			if cols, rows, err := term.GetSize(outFd); err == nil {
				offer(Size{Cols: cols, Rows: rows})
			}
		case <-timerC(timer):
			timer = nil
			if pending != nil {
				send(*pending)
				pending = nil
			}
		case <-stop:
			stopTimer(timer)
			return
		}
	}
}

// finalErr records the result and chooses Run's error.
func (t *Terminal) finalErr(e endEvent) error {
	res := t.session.Result()
	var err error
	switch e.kind {
	case endSignal:
		res.Ending, res.Signal = EndSignal, e.signal
		err = fmt.Errorf("%w: %v", ErrInterrupted, e.signal)
	case endStdin:
		err = fmt.Errorf("terminal input: %w", e.err)
	case endOutput:
		err = fmt.Errorf("terminal output: %w", e.err)
	default:
		if res.Ending == EndLost {
			err = &LostError{Err: res.Err}
		}
	}
	t.mu.Lock()
	t.result = res
	t.mu.Unlock()
	return err
}

// modeResets undo what a remote full-screen program may have switched on;
// each is harmless when the mode is already off: leave the alternate
// screen, show the cursor, mouse tracking (X10, normal, button, any-event,
// UTF-8, SGR, urxvt, SGR-pixel) off, focus reporting off, bracketed paste
// off, kitty keyboard flags to 0, modifyOtherKeys off, normal cursor keys
// and keypad, default colours and attributes.
const modeResets = "\x1b[?1049l\x1b[?25h" +
	"\x1b[?9l\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l\x1b[?1016l" +
	"\x1b[?1004l\x1b[?2004l\x1b[=0;1u\x1b[>4;0m\x1b[?1l\x1b>\x1b[0m"

// leave restores the terminal and prints the summary.
// After a panic in a pump it only restores, then re-raises the panic: the
// output may be what failed.
func (t *Terminal) leave(fd int, state *term.State, end endEvent) {
	_ = term.Restore(fd, state) // nothing better to do if the terminal is gone
	if end.kind == endPanic {
		panic(end.panic)
	}
	res := t.Result()
	// Best effort: the terminal may be gone. The summary is the one end
	// line; the server's message stays in Result.
	_, _ = io.WriteString(t.stdout, modeResets+"\r\n"+t.summary(res)+"\r\n")
	if t.opts.PauseOnExit && (res.Ending == EndLost || (res.Ending == EndExit && res.Exit.ExitCode != 0)) {
		_, _ = io.WriteString(t.stdout, "Press Enter to return.")
		waitForEnter(t.stdin)
	}
}

// summary is the end line: Result.Summary, or for a resumable shell that
// was left or lost, that it still runs.
func (t *Terminal) summary(res Result) string {
	if !t.opts.Resumable {
		return res.Summary()
	}
	switch res.Ending {
	case EndLost:
		return "[cairn: connection lost — reconnecting…]"
	case EndDetach, EndSignal:
		return "[cairn: detached; the shell keeps running — " + t.opts.ResumeHint + "]"
	}
	return res.Summary()
}

// waitForEnter reads the (cooked) terminal until a line ends.
func waitForEnter(r io.Reader) {
	buf := make([]byte, 256)
	for {
		n, err := r.Read(buf)
		for _, b := range buf[:n] {
			if b == '\n' || b == '\r' {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
