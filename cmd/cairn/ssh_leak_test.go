package main

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/server"
)

// TestSshSessionsLeaveNothingRunning opens 20 workbench sessions on a
// server in this process, each to its live list, closes them, and checks
// that no goroutine of a session is left: its programs, readers, pumps and
// watchers (a server runs for months; one reader and descriptor for every
// session that ever ended adds up). The loopback HTTP pool the sessions
// share keeps its idle connections, bounded by its size, and is not
// counted.
func TestSshSessionsLeaveNothingRunning(t *testing.T) {
	port, err := stack.FreePort()
	require.NoError(t, err)
	admin := newSSHKey(t)
	srv := inProcessServer(t, func(cfg *server.Config) {
		cfg.SSH.Listen = fmt.Sprintf("127.0.0.1:%d", port)
		cfg.SSH.HostKeyPath = filepath.Join(t.TempDir(), "host_ed25519")
		cfg.SSH.MaxSessions, cfg.SSH.MaxSessionsPerKey = 32, 32
		cfg.SSH.AuthorizedKeys = []server.SSHKeyConfig{{Name: "admin-key", Key: admin.public,
			Scopes: []string{"read", "write", "admin", "shell"}}}
	})
	s := &sshStack{port: port, admin: admin}

	base := sessionGoroutines() // the listener's accept loop, before any session
	require.Positive(t, base)

	sessions := make([]*goSSH, 20)
	for i := range sessions {
		sessions[i] = dialWorkbench(t, s, admin)
	}
	for _, g := range sessions {
		require.True(t, g.admitted(t, sshSeen))
	}
	during := sessionGoroutines()
	require.Greater(t, during, base+20, "the markers find the sessions' goroutines")
	for _, g := range sessions {
		g.close()
	}
	require.Eventually(t, func() bool { return srv.SSHSessions() == 0 }, sshSeen, 10*time.Millisecond)
	if !waitFor(func() bool { return sessionGoroutines() == base }, sshSeen) {
		var dump strings.Builder
		_ = pprof.Lookup("goroutine").WriteTo(&dump, 1)
		t.Fatalf("%d goroutines of the sessions left (%d with 20 open, %d of the listener):\n%s",
			sessionGoroutines()-base, during, base, dump.String())
	}
	t.Logf("session goroutines: %d with 20 sessions, none after they closed", during)
}

// sessionMarkers are in the stack of every goroutine a workbench session
// runs; of the server's own, only the SSH listener's accept loop has one.
var sessionMarkers = []string{"charmbracelet/bubbletea", "muesli/cancelreader", "cairn/server/sshui",
	"cairn-dev/cairn/tui", "charmbracelet/ssh.(*Server).HandleConn"}

// sessionGoroutines counts this process's goroutines running a session's
// code.
func sessionGoroutines() int {
	runtime.GC()
	var dump strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&dump, 2) // one block per goroutine
	n := 0
	for _, g := range strings.Split(dump.String(), "\n\n") {
		if slices.ContainsFunc(sessionMarkers, func(m string) bool { return strings.Contains(g, m) }) {
			n++
		}
	}
	return n
}

// waitFor polls ok until it holds or timeout passes.
func waitFor(ok func() bool, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond) // polling a count; nothing to wait on
	}
	return true
}
