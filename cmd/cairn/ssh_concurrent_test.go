package main

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// TestSshConcurrentSessions: 20 sessions at once each show the list live,
// then each sees a workspace made elsewhere with no key pressed.
func TestSshConcurrentSessions(t *testing.T) {
	const n = 20
	s := startSSHStack(t, "  maxSessions: 32\n  maxSessionsPerKey: 32\n")
	sessions := make([]*goSSH, n)
	marks := make([]int, n)
	var wg sync.WaitGroup
	for i := range sessions {
		sessions[i] = dialWorkbench(t, s, s.admin)
	}
	for i, g := range sessions {
		marks[i] = g.waitFrom(t, 0, "● live", sshSeen)
	}
	_, err := s.api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-for-everyone"})
	require.NoError(t, err)
	for i, g := range sessions {
		wg.Go(func() { g.waitFrom(t, marks[i], "ws-for-everyone", sshSeen) })
	}
	wg.Wait()
}

// TestSshSessionLimit: a key past ssh.maxSessionsPerKey is refused with
// a sentence and status 1, and gets in again once its session closed.
func TestSshSessionLimit(t *testing.T) {
	s := startSSHStack(t, "  maxSessionsPerKey: 1\n")
	first := dialWorkbench(t, s, s.admin)
	require.True(t, first.admitted(t, sshSeen))
	second := dialWorkbench(t, s, s.admin)
	require.False(t, second.admitted(t, sshSeen))
	require.ErrorContains(t, <-second.ended, "exited with status 1")
	require.Contains(t, second.stderr.String(), "ssh.maxSessionsPerKey")
	first.close()
	// The place is given back once the first session's program has ended.
	require.Eventually(t, func() bool { return dialWorkbench(t, s, s.admin).admitted(t, sshSeen) },
		sshSeen, 10*time.Millisecond)
}
