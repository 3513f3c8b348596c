//go:build linux

package ptyshell_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// ptyPair is a real pseudo-terminal: the Terminal under test reads and
// writes tty; the test types into ptmx and reads what the terminal shows.
type ptyPair struct {
	ptmx, tty *os.File

	mu      sync.Mutex
	out     bytes.Buffer
	changed chan struct{}
}

func openPTY(t *testing.T) *ptyPair {
	t.Helper()
	blocking, tty, err := pty.Open()
	require.NoError(t, err)
	require.NoError(t, pty.Setsize(tty, &pty.Winsize{Rows: 40, Cols: 120}))
	// pty.Open leaves the master in blocking mode, where Close cannot
	// interrupt a Read; a non-blocking duplicate goes through the poller.
	fd, err := unix.Dup(int(blocking.Fd()))
	require.NoError(t, err)
	require.NoError(t, blocking.Close())
	require.NoError(t, unix.SetNonblock(fd, true))
	ptmx := os.NewFile(uintptr(fd), "ptmx")
	p := &ptyPair{ptmx: ptmx, tty: tty, changed: make(chan struct{})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			close(p.changed)
			p.changed = make(chan struct{})
			p.mu.Unlock()
			if err != nil {
				return // once ptmx is closed
			}
		}
	}()
	t.Cleanup(func() {
		_ = ptmx.Close() // ends the reader, and hangs up tty for anything still reading it
		<-done
		_ = tty.Close()
	})
	return p
}

// waitOutput blocks until the terminal has shown want.
func (p *ptyPair) waitOutput(t *testing.T, want string) string {
	t.Helper()
	guard := time.After(ptyshelltest.Guard)
	for {
		p.mu.Lock()
		got, ch := p.out.String(), p.changed
		p.mu.Unlock()
		if strings.Contains(got, want) {
			return got
		}
		select {
		case <-ch:
		case <-guard:
			t.Fatalf("terminal never showed %q; it shows %q", want, got)
		}
	}
}

func (p *ptyPair) typeKeys(t *testing.T, s string) {
	t.Helper()
	_, err := p.ptmx.Write([]byte(s))
	require.NoError(t, err)
}

func (p *ptyPair) termios(t *testing.T) unix.Termios {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.tty.Fd()), unix.TCGETS)
	require.NoError(t, err)
	return *tio
}

// rig is a Terminal on a real PTY, running against Serve on a fake stream
// or against a scripted server.
type rig struct {
	pty      *ptyPair
	stream   *ptyshelltest.Stream
	srv      *ptyshelltest.Server
	terminal *ptyshell.Terminal
	before   unix.Termios
	done     chan error
	panicked chan any
}

// shellStream is a fake shell: a prompt, remote echo, and `exit N`.
func shellStream(st *ptyshelltest.Stream) {
	st.Echo = true
	st.StartFunc = func(context.Context) error {
		go func() { _ = st.Print([]byte("prompt$ ")) }() // fails only once the session is over
		return nil
	}
	st.OnInput = func(st *ptyshelltest.Stream, p []byte) {
		switch {
		case bytes.Contains(p, []byte("exit 3\r")):
			st.Exit(3)
		case bytes.Contains(p, []byte("boom\r")):
			_ = st.Print([]byte("BOOM")) // as above
		}
	}
}

type rigOptions struct {
	terminal ptyshell.TerminalOptions
	url      string // a scripted server; empty means Serve with shellStream
	stdout   func(tty *os.File) io.Writer
	stdin    io.Reader
}

func startTerminal(t *testing.T, o rigOptions) *rig {
	t.Helper()
	r := &rig{pty: openPTY(t), done: make(chan error, 1), panicked: make(chan any, 1)}
	r.before = r.pty.termios(t)
	url := o.url
	if url == "" {
		r.stream = ptyshelltest.NewStream()
		shellStream(r.stream)
		r.srv = ptyshelltest.NewServer(t, r.stream, ptyshell.ServeOptions{Status: testStatus})
		url = r.srv.URL
	}
	s, err := ptyshell.NewSession(ptyshelltest.Dial(t, url).Conn, ptyshell.SessionOptions{})
	require.NoError(t, err)
	o.terminal.Workspace = "ws-alpha"
	r.terminal, err = ptyshell.NewTerminal(s, o.terminal)
	require.NoError(t, err)
	r.terminal.SetStdin(r.pty.tty)
	r.terminal.SetStdout(r.pty.tty)
	r.terminal.SetStderr(io.Discard)
	if o.stdout != nil {
		r.terminal.SetStdout(o.stdout(r.pty.tty))
	}
	if o.stdin != nil {
		r.terminal.SetStdin(o.stdin)
	}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.panicked <- p
			}
		}()
		r.done <- r.terminal.Run()
	}()
	return r
}

func (r *rig) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		return err
	case p := <-r.panicked:
		t.Fatalf("Run panicked: %v", p)
	case <-time.After(ptyshelltest.Guard):
		t.Fatalf("Run did not return within %s", ptyshelltest.Guard)
	}
	return nil
}

// restored checks the terminal is back to its state before Run.
func (r *rig) restored(t *testing.T) {
	t.Helper()
	require.Equal(t, r.before, r.pty.termios(t), "termios restored")
}

// inRaw checks Run has the terminal in raw mode.
func (r *rig) inRaw(t *testing.T) {
	t.Helper()
	tio := r.pty.termios(t)
	require.Zero(t, tio.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG), "raw mode")
}

func TestTerminalExit(t *testing.T) {
	t.Parallel()
	r := startTerminal(t, rigOptions{})
	r.pty.waitOutput(t, "prompt$ ")
	r.inRaw(t)
	r.pty.typeKeys(t, "echo hi\r")
	r.pty.waitOutput(t, "echo hi\r")
	r.pty.typeKeys(t, "exit 3\r")
	require.NoError(t, r.wait(t))
	r.restored(t)
	shown := r.pty.waitOutput(t, "[cairn: shell exited with status 3]")
	require.Contains(t, shown, "cairn shell ▸ ws-alpha (/mnt/cairn/ws) — Ctrl-] ends the session")
	require.Contains(t, shown, "\x1b[?1049l\x1b[?25h", "modes reset")
	require.Contains(t, shown, "\x1b[?2004l")
	require.Equal(t, 1, strings.Count(shown, "echo hi"), "no local echo in raw mode")
	res := r.terminal.Result()
	require.Equal(t, ptyshell.EndExit, res.Ending)
	require.Equal(t, 3, res.ExitStatus())
	require.Equal(t, ptyshell.ReasonExited, r.srv.Result(t).Reason)
}

// TestTerminalDetach: the detach byte alone leaves (close 1000, result
// detached); inside a paste it is data. Afterwards nothing reads the
// terminal: the next reader gets the next byte.
func TestTerminalDetach(t *testing.T) {
	t.Parallel()
	r := startTerminal(t, rigOptions{})
	r.pty.waitOutput(t, "prompt$ ")
	r.pty.typeKeys(t, "a\x1db")
	r.pty.waitOutput(t, "a\x1db")
	r.pty.typeKeys(t, "\x1d")
	require.NoError(t, r.wait(t))
	r.restored(t)
	r.pty.waitOutput(t, "[cairn: left the shell; the server ends it]")
	require.Equal(t, ptyshell.EndDetach, r.terminal.Result().Ending)
	require.Equal(t, 0, r.terminal.Result().ExitStatus())
	require.Equal(t, ptyshell.ReasonClientClosed, r.srv.Result(t).Reason)
	require.Equal(t, "a\x1db", string(r.stream.Input()), "the lone detach byte is not forwarded")

	// The stdin reader is gone: a line typed now reaches the next reader.
	r.pty.typeKeys(t, "next\n")
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := r.pty.tty.Read(buf) // cleanup's close unblocks it if the test fails
		got <- string(buf[:n])
	}()
	select {
	case s := <-got:
		require.Equal(t, "next\n", s)
	case <-time.After(ptyshelltest.Guard):
		t.Fatal("a goroutine of Run consumed the input")
	}
}

func TestTerminalDetachKeyConfigured(t *testing.T) {
	t.Parallel()
	r := startTerminal(t, rigOptions{terminal: ptyshell.TerminalOptions{DetachKey: "ctrl-x"}})
	r.pty.waitOutput(t, "Ctrl-X ends the session")
	r.pty.waitOutput(t, "prompt$ ")
	r.pty.typeKeys(t, "\x1d")
	r.pty.waitOutput(t, "\x1d") // Ctrl-] is data now
	r.pty.typeKeys(t, "\x18")
	require.NoError(t, r.wait(t))
	require.Equal(t, ptyshell.EndDetach, r.terminal.Result().Ending)
}

func TestTerminalRestoreOnPanic(t *testing.T) {
	t.Parallel()
	r := startTerminal(t, rigOptions{stdout: func(tty *os.File) io.Writer { return &panicWriter{File: tty} }})
	r.pty.waitOutput(t, "prompt$ ")
	r.inRaw(t)
	r.pty.typeKeys(t, "boom\r")
	select {
	case p := <-r.panicked:
		require.Equal(t, "output writer exploded", p)
	case err := <-r.done:
		t.Fatalf("Run returned %v instead of panicking", err)
	case <-time.After(ptyshelltest.Guard):
		t.Fatal("Run did not panic")
	}
	r.restored(t)
	require.Equal(t, ptyshell.ReasonClientClosed, r.srv.Result(t).Reason)
}

// panicWriter is a terminal whose writer panics on "BOOM".
type panicWriter struct{ *os.File }

func (w *panicWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("BOOM")) {
		panic("output writer exploded")
	}
	return w.File.Write(p)
}

func TestTerminalRestoreOnSignal(t *testing.T) {
	t.Parallel()
	signals := make(chan os.Signal, 1)
	r := startTerminal(t, rigOptions{terminal: ptyshell.TerminalOptions{Signals: signals}})
	r.pty.waitOutput(t, "prompt$ ")
	r.inRaw(t)
	signals <- syscall.SIGTERM
	err := r.wait(t)
	require.ErrorIs(t, err, ptyshell.ErrInterrupted)
	r.restored(t)
	r.pty.waitOutput(t, "[cairn: left the shell on terminated; the server ends it]")
	res := r.terminal.Result()
	require.Equal(t, ptyshell.EndSignal, res.Ending)
	require.Equal(t, 128+15, res.ExitStatus())
	require.Equal(t, ptyshell.ReasonClientClosed, r.srv.Result(t).Reason)
}

// TestTerminalConnectionLost: no EXIT means connection lost, never status
// 0; with PauseOnExit the summary waits for Enter.
func TestTerminalConnectionLost(t *testing.T) {
	t.Parallel()
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
		_, _, _ = c.ReadMessage() // the first key
		tcp := c.NetConn().(*net.TCPConn)
		_ = tcp.SetLinger(0) // close sends RST
		_ = tcp.Close()
	})
	r := startTerminal(t, rigOptions{url: url, terminal: ptyshell.TerminalOptions{PauseOnExit: true}})
	r.pty.waitOutput(t, "prompt$ ")
	r.pty.typeKeys(t, "x")
	shown := r.pty.waitOutput(t, "Press Enter to return.")
	require.Contains(t, shown, "[cairn: connection lost — the shell was probably ended]")
	r.restored(t)
	r.pty.typeKeys(t, "\r")
	err := r.wait(t)
	require.ErrorIs(t, err, ptyshell.ErrConnectionLost)
	require.Equal(t, 255, r.terminal.Result().ExitStatus())
}

func TestTerminalNoticeAndServerEnd(t *testing.T) {
	t.Parallel()
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: "running", IdleTimeoutSecs: 1800})
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
		_ = ptyshelltest.WriteControl(c, ptyshell.FrameNotice, ptyshell.Notice{Code: ptyshell.NoticeIdleWarning, SecondsLeft: 60})
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("after"))
		_ = ptyshelltest.WriteExit(c, ptyshell.Exit{ExitCode: 129, Reason: ptyshell.ReasonIdleTimeout, Message: "closed after 30 minutes without input"})
		_, _, _ = c.ReadMessage()
	})
	r := startTerminal(t, rigOptions{url: url})
	require.NoError(t, r.wait(t))
	r.restored(t)
	shown := r.pty.waitOutput(t, "[cairn: shell ended: idle timeout after 30 min (status 129); warned 1 min before]")
	require.Contains(t, shown, "prompt$ \aafter", "the bell, not the notice, on screen")
	require.NotContains(t, shown, "closed after 30 minutes", "one end line: the server's message stays in Result")
	require.Equal(t, "closed after 30 minutes without input", r.terminal.Result().Exit.Message)
	require.Equal(t, 129, r.terminal.Result().ExitStatus())
}

// TestTerminalResize: injected size changes become debounced RESIZE frames,
// latest size wins.
func TestTerminalResize(t *testing.T) {
	t.Parallel()
	final := ptyshell.Size{Cols: 100, Rows: 30}
	got := make(chan []ptyshell.Size, 1)
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		var sizes []ptyshell.Size
		defer func() { got <- sizes }()
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
		for {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			if f, _ := ptyshell.DecodeFrame(msg); f.Type == ptyshell.FrameResize {
				size, _ := ptyshell.ParseResize(f.Payload)
				sizes = append(sizes, size)
				if size == final {
					_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("resized"))
				}
			}
		}
	})
	clock := ptyshelltest.NewClock(time.Unix(1e9, 0))
	sizes := make(chan ptyshell.Size) // unbuffered: a send returns once the watcher has the size
	r := startTerminal(t, rigOptions{url: url, terminal: ptyshell.TerminalOptions{Sizes: sizes, Clock: clock}})
	r.pty.waitOutput(t, "prompt$ ")
	for i := range 20 {
		sizes <- ptyshell.Size{Cols: 81 + i, Rows: 30}
	}
	clock.Advance(ptyshell.ResizeInterval)
	r.pty.waitOutput(t, "resized")
	r.pty.typeKeys(t, "\x1d")
	require.NoError(t, r.wait(t))
	require.Equal(t, []ptyshell.Size{{Cols: 81, Rows: 30}, final}, <-got)
}

// TestTerminalLargePaste: 1 MiB typed at once arrives as INPUT frames of at
// most 32 KiB, in order and byte-identical.
func TestTerminalLargePaste(t *testing.T) {
	t.Parallel()
	paste := pattern(1 << 20)
	got := make(chan []ptyshell.Frame, 1)
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		var frames []ptyshell.Frame
		defer func() { got <- frames }()
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
		total := 0
		for total < len(paste) {
			_, msg, err := c.ReadMessage()
			if err != nil {
				return
			}
			f, _ := ptyshell.DecodeFrame(msg)
			frames = append(frames, f)
			total += len(f.Payload)
		}
		_ = ptyshelltest.WriteExit(c, ptyshell.Exit{Reason: ptyshell.ReasonExited, Message: "bye"})
		_, _, _ = c.ReadMessage()
	})
	r := startTerminal(t, rigOptions{url: url, terminal: ptyshell.TerminalOptions{DetachKey: "none"}})
	r.pty.waitOutput(t, "prompt$ ") // raw mode is on: every byte passes untouched
	typed := make(chan error, 1)
	go func() { _, err := r.pty.ptmx.Write(paste); typed <- err }()
	require.NoError(t, r.wait(t))
	require.NoError(t, <-typed)
	var input []byte
	for _, f := range <-got {
		require.Equal(t, ptyshell.FrameInput, f.Type)
		require.LessOrEqual(t, len(f.Payload), ptyshell.MaxDataPayload)
		input = append(input, f.Payload...)
	}
	require.True(t, bytes.Equal(paste, input))
	require.NotContains(t, r.pty.waitOutput(t, "[cairn: shell exited with status 0]"), "Ctrl-] ends", "no detach key in the banner")
}

func TestTerminalNeedsATerminal(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	t.Cleanup(func() { _ = pr.Close(); _ = pw.Close() })
	r := startTerminal(t, rigOptions{stdin: pr})
	err = r.wait(t)
	require.ErrorIs(t, err, ptyshell.ErrNotTerminal)
	require.EqualError(t, err, "a shell needs a terminal")
	require.Equal(t, ptyshell.ReasonClientClosed, r.srv.Result(t).Reason, "the session is closed")
	r.restored(t)
}

func TestParseDetachKey(t *testing.T) {
	t.Parallel()
	ok := map[string]byte{"": 0x1d, "ctrl-]": 0x1d, "Ctrl-]": 0x1d, "ctrl-a": 0x01, "CTRL-X": 0x18, "ctrl-@": 0x00, "ctrl-_": 0x1f, "ctrl-\\": 0x1c,
		"ctrl+]": 0x1d, "Ctrl+X": 0x18}
	for in, want := range ok {
		key, enabled, err := ptyshell.ParseDetachKey(in)
		require.NoError(t, err, in)
		require.True(t, enabled, in)
		require.Equal(t, want, key, in)
	}
	_, enabled, err := ptyshell.ParseDetachKey("none")
	require.NoError(t, err)
	require.False(t, enabled)
	for _, in := range []string{"ctrl-", "ctrl-ab", "alt-x", "]", "ctrl-1", "ctrl-é", "ctrl+", "ctrl+1", "shift+x"} {
		_, _, err := ptyshell.ParseDetachKey(in)
		require.Error(t, err, in)
	}
}

// csi matches the control sequences the Terminal writes around its lines:
// erase-line, the mode resets and the keypad reset.
var csi = regexp.MustCompile(`\x1b\[[?=>]?[0-9;]*[A-Za-z]|\x1b>`)

// screenText is what the terminal showed without control sequences, the
// CR of the tty's NL→CRNL folded back.
func screenText(shown string) string {
	return strings.ReplaceAll(csi.ReplaceAllString(shown, ""), "\r\r\n", "\r\n")
}

// TestTerminalLines: the exact lines a shell prints — the banner,
// then "starting container…" until STATUS running erases it, the shell's
// own output, then one summary line.
func TestTerminalLines(t *testing.T) {
	t.Parallel()
	banner := "cairn shell ▸ ws-alpha (/mnt/cairn/ws) — Ctrl-] ends the session\r\n"
	for _, tc := range []struct {
		name   string
		script func(c *websocket.Conn)
		want   string
	}{
		{"Exit", func(c *websocket.Conn) {
			_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateStarting})
			_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateRunning})
			_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
			_ = ptyshelltest.WriteExit(c, ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited, Message: "the shell exited with status 3"})
		}, banner + "starting container…\rprompt$ \r\n[cairn: shell exited with status 3]\r\n"},
		{"IdleTimeout", func(c *websocket.Conn) {
			_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateRunning, IdleTimeoutSecs: 1800})
			_ = ptyshelltest.WriteExit(c, ptyshell.Exit{ExitCode: 129, Reason: ptyshell.ReasonIdleTimeout, Message: "closed after 30 minutes without input"})
		}, banner + "starting container…\r\r\n[cairn: shell ended: idle timeout after 30 min (status 129)]\r\n"},
		{"LostWhileStarting", func(c *websocket.Conn) {
			_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateStarting})
			_ = c.Close()
		}, banner + "starting container…\r\n[cairn: connection lost — the shell was probably ended]\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
				tc.script(c)
				_, _, _ = c.ReadMessage()
			})
			r := startTerminal(t, rigOptions{url: url})
			_ = r.wait(t)
			shown := r.pty.waitOutput(t, "]\r\r\n") // the tty turns NL into CR NL
			require.Equal(t, tc.want, screenText(shown))
			if tc.name != "LostWhileStarting" {
				require.Contains(t, shown, "starting container…\r\x1b[2K", "erased once the container runs")
			}
		})
	}
}
