//go:build linux

package main

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// TestAttachLoopReattachRefused: the first attach runs and its connection
// drops without a close frame, as when the server is killed; the reattach
// is refused. attachLoop ends with one sentence naming the refusal and the
// exit code of its kind, the terminal out of raw mode — not a panic over a
// session that never was.
func TestAttachLoopReattachRefused(t *testing.T) {
	for _, tc := range []struct {
		name     string
		status   int
		reason   cairn.Reason
		detached time.Duration // the reattach's bound
		code     exitError
		says     []string
		attaches int32 // the first attach and the reattaches; 2 when 0
	}{
		{name: "ShellNotFound", status: http.StatusNotFound, reason: cairn.ReasonShellNotFound,
			detached: time.Minute, code: exitNotFound, says: []string{"shell_not_found", "HTTP 404", "refused by the test", "request req-1"}},
		{name: "SecretRequired", status: http.StatusUnauthorized, reason: cairn.ReasonShellSecretRequired,
			detached: time.Minute, code: exitNotAllowed, says: []string{"shell_secret_required", "HTTP 401"}},
		{name: "SecretInvalid", status: http.StatusForbidden, reason: cairn.ReasonShellSecretInvalid,
			detached: time.Minute, code: exitNotAllowed, says: []string{"shell_secret_invalid", "HTTP 403"}},
		{name: "Conflict", status: http.StatusConflict, reason: cairn.ReasonVolumeNotReady,
			detached: time.Minute, code: exitConflict, says: []string{"volume_not_ready", "HTTP 409"}},
		// A server shutting down is waited out for the shell's detached
		// timeout: a zero one gives up after the first answer, a longer one
		// tries again (250 ms, then 500 ms later).
		{name: "ShuttingDown", status: http.StatusServiceUnavailable, reason: cairn.ReasonServerShuttingDown,
			code: exitUnavailable, says: []string{"server_shutting_down", "HTTP 503"}},
		{name: "ShuttingDownWaitedOut", status: http.StatusServiceUnavailable, reason: cairn.ReasonServerShuttingDown,
			detached: 3 * time.Second, code: exitUnavailable, says: []string{"server_shutting_down", "HTTP 503"}, attaches: 3},
		{name: "Unreachable", code: exitUnavailable, says: []string{"no answer", "unreachable"}, attaches: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir()) // where a refused shell's secret is forgotten
			srv := newRefusingShellServer(t, tc.status, tc.reason)
			term := openTestTTY(t)
			cl, err := client.New(srv.URL, client.WithToken("token"))
			require.NoError(t, err)
			c := &cli{}

			status, err := c.attachLoop(t.Context(), cl, term.tty, "sh-1", "secret", "ws", "", tc.detached)
			require.Error(t, err, "status %d", status)
			msg := failure(err).Error()
			var code exitError
			require.ErrorAs(t, failure(err), &code)
			require.Equal(t, tc.code, code, "the code main exits with")
			require.NotContains(t, msg, "\n", "one sentence")
			require.Contains(t, msg, "shell sh-1 could not be reattached")
			for _, want := range tc.says {
				require.Contains(t, msg, want)
			}
			if tc.attaches > 2 {
				require.GreaterOrEqual(t, srv.attaches.Load(), tc.attaches, "the reattach was tried again")
			} else {
				require.Equal(t, cmp.Or(tc.attaches, 2), srv.attaches.Load(), "the attach, then the reattach that failed")
			}
			term.requireCooked(t)
		})
	}
}

// TestAttachLoopInterruptedReattach: Ctrl-C while reconnecting ends the
// loop with the lost connection's status, not a panic.
func TestAttachLoopInterruptedReattach(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	srv := newRefusingShellServer(t, http.StatusNotFound, cairn.ReasonShellNotFound)
	term := openTestTTY(t)
	cl, err := client.New(srv.URL, client.WithToken("token"))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	srv.interrupt = cancel
	status, err := (&cli{}).attachLoop(ctx, cl, term.tty, "sh-1", "secret", "ws", "", time.Hour)
	require.NoError(t, err)
	require.Equal(t, ptyshell.ExitStatusLost, status)
	term.requireCooked(t)
}

// refusingShellServer serves the v2 attach of shell sh-1 once — STATUS
// running, some output, then the connection cut without a close frame —
// and refuses every later attach with status and reason; with status 0
// it closes the listener instead, so nothing answers.
type refusingShellServer struct {
	*httptest.Server
	attaches  atomic.Int32
	interrupt func() // if set, a reattach is not answered: it cancels instead
}

func newRefusingShellServer(t *testing.T, status int, reason cairn.Reason) *refusingShellServer {
	t.Helper()
	s := &refusingShellServer{}
	up := websocket.Upgrader{Subprotocols: []string{ptyshell.SubprotocolV2}}
	var once sync.Once
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/shells/sh-1/attach" {
			http.NotFound(w, r)
			return
		}
		if s.attaches.Add(1) > 1 {
			if s.interrupt != nil {
				s.interrupt()               // the user's Ctrl-C while the reattach waits
				panic(http.ErrAbortHandler) // no answer: the connection is dropped
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(map[string]any{"request_id": "req-1",
				"error": map[string]string{"reason": string(reason), "detail": "refused by the test"}})
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return // Upgrade has answered
		}
		_ = ptyshelltest.WriteControl(c, ptyshell.FrameStatus, ptyshell.Status{State: ptyshell.StateRunning})
		_ = ptyshelltest.WriteFrame(c, ptyshell.FrameOutput, []byte("/mnt/cairn/ws # "))
		if status == 0 {
			once.Do(func() { go s.Close() }) // waits for this handler; later dials find nobody
		}
		_ = c.NetConn().Close() // no close frame: a killed server
	}))
	t.Cleanup(s.Close)
	return s
}

// testTTY is a pseudo-terminal standing in for the user's: attachLoop
// runs on tty, and what it shows is drained from the other end.
type testTTY struct {
	tty tty
}

func openTestTTY(t *testing.T) *testTTY {
	t.Helper()
	ptmx, f, err := pty.Open()
	require.NoError(t, err)
	require.NoError(t, pty.Setsize(f, &pty.Winsize{Rows: 24, Cols: 80}))
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			if _, err := ptmx.Read(buf); err != nil {
				return // once both ends are closed
			}
		}
	}()
	t.Cleanup(func() {
		_ = f.Close()
		_ = ptmx.Close()
		<-drained
	})
	return &testTTY{tty: tty{in: f, out: f}}
}

// requireCooked checks that raw mode is off: the line discipline echoes
// and edits lines again.
func (p *testTTY) requireCooked(t *testing.T) {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(p.tty.in.Fd()), unix.TCGETS)
	require.NoError(t, err)
	require.NotZero(t, tio.Lflag&unix.ICANON, "canonical mode is back")
	require.NotZero(t, tio.Lflag&unix.ECHO, "echo is back")
}
