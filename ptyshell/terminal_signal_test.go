//go:build linux

package ptyshell_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

const terminalChildEnv = "PTYSHELL_TERMINAL_CHILD_URL"

// terminalChild runs a Terminal on the process's own stdin and stdout with
// the real signal subscription, and exits with the CLI's status.
func terminalChild(url string) int {
	conn, resp, err := (&websocket.Dialer{Subprotocols: []string{ptyshell.Subprotocol}}).Dial(url, nil)
	if resp != nil {
		_ = resp.Body.Close() // a 101 has no body
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	s, err := ptyshell.NewSession(conn, ptyshell.SessionOptions{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	term, err := ptyshell.NewTerminal(s, ptyshell.TerminalOptions{Workspace: "child"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if err := term.Run(); err != nil && !errors.Is(err, ptyshell.ErrInterrupted) {
		fmt.Fprintln(os.Stderr, err)
	}
	return term.Result().ExitStatus()
}

// TestTerminalRealSignal: a real SIGTERM to a process running a Terminal
// restores the terminal before the process exits, with status 128+15.
func TestTerminalRealSignal(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{})
	url := ptyshelltest.ScriptServer(t, nil, func(c *websocket.Conn) {
		defer close(closed)
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("prompt$ "))
		for {
			if _, _, err := c.ReadMessage(); err != nil {
				return
			}
		}
	})
	p := openPTY(t)
	before := p.termios(t)
	var stderr bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), terminalChildEnv+"="+url)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.tty, p.tty, &stderr
	require.NoError(t, cmd.Start())
	p.waitOutput(t, "prompt$ ")
	require.Zero(t, p.termios(t).Lflag&(syscall.ICANON|syscall.ECHO), "raw mode in the child")
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		exitErr, ok := errors.AsType[*exec.ExitError](err)
		require.True(t, ok, "child: %v, stderr: %s", err, stderr.String())
		require.Equal(t, 128+15, exitErr.ExitCode(), "stderr: %s", stderr.String())
	case <-time.After(ptyshelltest.Guard):
		_ = cmd.Process.Kill()
		t.Fatal("the child did not exit on SIGTERM")
	}
	require.Equal(t, before, p.termios(t), "termios restored")
	p.waitOutput(t, "[cairn: left the shell on terminated; the server ends it]")
	<-closed
}
