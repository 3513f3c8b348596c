//go:build chaos

package chaos

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/wsexec"
	"github.com/stretchr/testify/require"
)

// The shell and exec clients the scenarios hold open across a fault.

// sessionBound is how long a session may take to end once its engine is
// gone: past it, the client hangs.
const sessionBound = 30 * time.Second

// liveShell is an attached v2 shell's client, with what reattaches it.
type liveShell struct {
	sess *ptyshell.Session
	info *cairn.ShellSessionInfo
}

// openShell creates a v2 shell, attaches to it as its writer and waits
// for the shell to answer.
func openShell(t *testing.T, cl *client.Client, wsID string) *liveShell {
	t.Helper()
	size := ptyshell.Size{Cols: 80, Rows: 24}
	info, err := cl.CreateShell(t.Context(), wsID, size, "")
	require.NoError(t, err)
	sess, err := cl.AttachShell(t.Context(), info.ShellID, info.Secret, size)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sess.Close() })
	_, err = sess.Write([]byte("echo ready-$((6*7))\r"))
	require.NoError(t, err)
	readUntil(t, sess, "ready-42")
	return &liveShell{sess: sess, info: info}
}

// readUntil reads the shell's output until it holds want, each read
// within sessionBound.
func readUntil(t *testing.T, sess *ptyshell.Session, want string) {
	t.Helper()
	var out strings.Builder
	for !strings.Contains(out.String(), want) {
		ctx, cancel := context.WithTimeout(t.Context(), sessionBound)
		m, err := sess.Next(ctx)
		cancel()
		require.NoError(t, err, "waiting for %q; got %q", want, out.String())
		out.Write(m.Output)
	}
}

// lost waits, within sessionBound, for the shell's connection to end
// without an EXIT — cut with its server or engine — and returns how.
func (s *liveShell) lost(t *testing.T) ptyshell.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), sessionBound)
	defer cancel()
	for {
		m, err := s.sess.Next(ctx)
		if err != nil {
			require.NoError(t, ctx.Err(), "the shell's connection hung")
			res := s.sess.Result()
			require.Equal(t, ptyshell.EndLost, res.Ending, "the connection was cut, the shell not ended: %+v", res)
			return res
		}
		require.NotEqual(t, ptyshell.FrameExit, m.Type, "the shell ended: %+v", m.Exit)
	}
}

// runningExec is an exec in flight.
type runningExec struct {
	done chan struct{}
	st   wsexec.Status
	err  error
}

// startExec runs a long command in the workspace and returns once it has
// printed that it started.
func startExec(t *testing.T, cl *client.Client, wsID string) *runningExec {
	t.Helper()
	started := make(chan struct{})
	x := &runningExec{done: make(chan struct{})}
	out := &signalWriter{want: "started", seen: started}
	go func() {
		defer close(x.done)
		x.st, x.err = cl.Exec(t.Context(), wsID, []string{"sh", "-c", "echo started; sleep 600"}, nil, out, io.Discard)
	}()
	select {
	case <-started:
	case <-x.done:
		t.Fatalf("the exec ended before it started: %+v, %v", x.st, x.err)
	case <-time.After(time.Minute):
		t.Fatal("the exec did not start")
	}
	return x
}

// end waits, within sessionBound, for the exec's status and requires a
// reason.
func (x *runningExec) end(t *testing.T) wsexec.Status {
	t.Helper()
	select {
	case <-x.done:
	case <-time.After(sessionBound):
		t.Fatal("the exec client got no status")
	}
	require.NoError(t, x.err, "the exec ended without a status")
	require.NotEmpty(t, x.st.Reason)
	return x.st
}

// signalWriter closes seen once what was written holds want.
type signalWriter struct {
	mu   sync.Mutex
	buf  strings.Builder
	want string
	seen chan struct{}
	once sync.Once
}

func (w *signalWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}
