//go:build linux

package shell_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
	"github.com/cairn-dev/cairn/tui/shell"
)

// screen is a real pseudo-terminal: the Command reads and writes tty, the
// test types into ptmx and reads what it shows.
type screen struct {
	ptmx, tty *os.File
	mu        sync.Mutex
	out       bytes.Buffer
}

func openScreen(t *testing.T) *screen {
	t.Helper()
	blocking, tty, err := pty.Open()
	require.NoError(t, err)
	// A non-blocking duplicate of the master, so Close ends its Read.
	fd, err := unix.Dup(int(blocking.Fd()))
	require.NoError(t, err)
	require.NoError(t, blocking.Close())
	require.NoError(t, unix.SetNonblock(fd, true))
	s := &screen{ptmx: os.NewFile(uintptr(fd), "ptmx"), tty: tty}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := s.ptmx.Read(buf)
			s.mu.Lock()
			s.out.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = s.ptmx.Close(); <-done; _ = tty.Close() })
	return s
}

// waitFor polls until the screen shows want and returns what it shows.
func (s *screen) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(ptyshelltest.Guard)
	for {
		s.mu.Lock()
		got := s.out.String()
		s.mu.Unlock()
		if strings.Contains(got, want) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen never showed %q; it shows %q", want, got)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// controls matches the escape sequences around the lines.
var controls = regexp.MustCompile(`\x1b\[[?=>]?[0-9;]*[A-Za-z]|\x1b>`)

// text is the screen without escape sequences, the tty's CR NL folded.
func text(shown string) string {
	return strings.ReplaceAll(controls.ReplaceAllString(shown, ""), "\r\r\n", "\r\n")
}

// TestCommandLines runs the production Command on a real PTY and checks
// the lines it prints: the banner naming the configured abandon key,
// "starting container…" until the container runs, one summary line, then
// the pause of shell.pause_on_exit.
func TestCommandLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, key, pause string
		exit             ptyshell.Exit
		want             string
	}{
		{"DefaultKeyExitZeroAlways", "ctrl+]", "always", ptyshell.Exit{ExitCode: 0, Reason: ptyshell.ReasonExited},
			"cairn shell ▸ ws-alpha (/mnt/cairn/ws) — Ctrl-] ends the session\r\nstarting container…\rprompt$ \r\n" +
				"[cairn: shell exited with status 0]\r\nPress Enter to return."},
		{"RemappedKeyExitThreeAuto", "ctrl+x", "auto", ptyshell.Exit{ExitCode: 3, Reason: ptyshell.ReasonExited},
			"cairn shell ▸ ws-alpha (/mnt/cairn/ws) — Ctrl-X ends the session\r\nstarting container…\rprompt$ \r\n" +
				"[cairn: shell exited with status 3]\r\nPress Enter to return."},
		{"NoKeyIdleNever", "none", "never", ptyshell.Exit{ExitCode: 129, Reason: ptyshell.ReasonIdleTimeout},
			"cairn shell ▸ ws-alpha (/mnt/cairn/ws)\r\nstarting container…\rprompt$ \r\n" +
				"[cairn: shell ended: idle timeout (status 129)]\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
				_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateStarting})
				_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateRunning})
				_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
				_ = ptyshelltest.WriteExit(c, tc.exit)
				_, _, _ = c.ReadMessage()
			})
			scr := openScreen(t)
			cmd, err := shell.New(ptyshelltest.Session(t, url), shell.NewOptions("ws-alpha", tc.key, tc.pause))
			require.NoError(t, err)
			cmd.SetStdin(scr.tty)
			cmd.SetStdout(scr.tty)
			done := make(chan error, 1)
			go func() { done <- cmd.Run() }()
			last := "]\r\r\n"
			if shell.Pauses(tc.pause, ptyshell.Result{Ending: ptyshell.EndExit, Exit: tc.exit}) {
				last = "Press Enter to return."
			}
			shown := scr.waitFor(t, last)
			require.Equal(t, tc.want, text(shown))
			_, err = scr.ptmx.Write([]byte("\r"))
			require.NoError(t, err)
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(ptyshelltest.Guard):
				t.Fatal("Run did not return after Enter")
			}
		})
	}
}
