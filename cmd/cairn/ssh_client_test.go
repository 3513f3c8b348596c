package main

import (
	"bytes"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	gossh "golang.org/x/crypto/ssh"
)

// goSSH is one workbench session through Go's SSH client: keys in, the
// raw output kept (the last 256 KiB) to wait on.
type goSSH struct {
	client *gossh.Client
	sess   *gossh.Session
	stdin  io.WriteCloser
	stderr syncWriter
	ended  chan error // the session's Wait, once it returns

	mu      sync.Mutex
	out     []byte
	dropped int           // bytes trimmed off out's front: marks count from the stream's start
	changed chan struct{} // closed and replaced on every write
}

const goSSHKeep = 256 << 10

func dialWorkbench(t testing.TB, s *sshStack, key sshKey) *goSSH {
	t.Helper()
	c, err := gossh.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.port), &gossh.ClientConfig{User: "op",
		Auth:            []gossh.AuthMethod{gossh.PublicKeys(key.signer)},
		HostKeyCallback: gossh.InsecureIgnoreHostKey()}) //nolint:gosec // a test's throwaway server
	require.NoError(t, err)
	sess, err := c.NewSession()
	require.NoError(t, err)
	g := &goSSH{client: c, sess: sess, changed: make(chan struct{}), ended: make(chan error, 1)}
	require.NoError(t, sess.Setenv("NO_COLOR", "1"))
	require.NoError(t, sess.RequestPty("xterm-256color", 40, 120, gossh.TerminalModes{}))
	g.stdin, err = sess.StdinPipe()
	require.NoError(t, err)
	sess.Stdout, sess.Stderr = g, &g.stderr
	require.NoError(t, sess.Shell())
	go func() { g.ended <- sess.Wait() }()
	t.Cleanup(g.close)
	return g
}

// admitted waits until the session shows the live list (true) or ends
// first, as a refused one does (false).
func (g *goSSH) admitted(t testing.TB, timeout time.Duration) bool {
	t.Helper()
	deadline := time.After(timeout)
	for {
		g.mu.Lock()
		live := bytes.Contains(g.out, []byte("● live"))
		changed := g.changed
		g.mu.Unlock()
		if live {
			return true
		}
		select {
		case <-changed:
		case err := <-g.ended:
			g.ended <- err
			return false
		case <-deadline:
			t.Fatalf("waited %v for the session to be admitted or refused", timeout)
		}
	}
}

// syncWriter is a buffer written by the SSH library's goroutines.
type syncWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	return len(p), nil
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// Write keeps the output; it is the session's stdout.
func (g *goSSH) Write(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.out = append(g.out, p...)
	if over := len(g.out) - goSSHKeep; over > 0 {
		g.out = append(g.out[:0], g.out[over:]...)
		g.dropped += over
	}
	close(g.changed)
	g.changed = make(chan struct{})
	return len(p), nil
}

// mark is where the output is now; waitFrom looks only after it.
func (g *goSSH) mark() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dropped + len(g.out)
}

// waitFrom waits until text is in the output after mark (the output's
// trimming aside), and returns the new mark.
func (g *goSSH) waitFrom(t testing.TB, mark int, text string, timeout time.Duration) int {
	t.Helper()
	deadline := time.After(timeout)
	for {
		g.mu.Lock()
		from := min(max(0, mark-g.dropped), len(g.out))
		i := bytes.Index(g.out[from:], []byte(text))
		changed := g.changed
		end := g.dropped + len(g.out)
		g.mu.Unlock()
		if i >= 0 {
			return end
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("waited %v for %q in the session's output", timeout, text)
		}
	}
}

func (g *goSSH) keys(t testing.TB, k string) {
	t.Helper()
	_, err := io.WriteString(g.stdin, k)
	require.NoError(t, err)
}

func (g *goSSH) close() {
	_ = g.sess.Close()
	_ = g.client.Close()
}
