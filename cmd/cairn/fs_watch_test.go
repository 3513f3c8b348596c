package main

import (
	"bufio"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestCLIFsWatch: cairn fs watch prints the changes under its path as a
// tool container and the CLI make them, one "op path" a line.
func TestCLIFsWatch(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	wsName := uniqueName("watched")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	s.ok(t, "ws", "setup", wsName)
	s.ok(t, "fs", "mkdir", wsName, "out")

	cmd := s.command(t.Context(), map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": s.token}, "fs", "watch", wsName, "out", "-o", "table")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	// next is the next line within wait; "" when none came.
	next := func(wait time.Duration) string {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the watch ended")
			require.NotContains(t, l, "elsewhere", "only changes under the path")
			return l
		case <-time.After(wait):
			return ""
		}
	}
	await := func(want string) {
		t.Helper()
		for {
			l := next(time.Minute)
			require.NotEmpty(t, l, "no %q within a minute", want)
			if l == want {
				return
			}
		}
	}
	// The watch has subscribed once it reports a change: make one until
	// it does.
	for i := 0; ; i++ {
		require.Less(t, i, 30, "the watch reported nothing")
		probe := fmt.Sprintf("out/probe-%d", i)
		s.ok(t, "fs", "mkdir", wsName, probe)
		if l := next(2 * time.Second); strings.HasPrefix(l, "created\tout/probe-") {
			break // any probe: an earlier one's line may come late
		}
	}
	stacktest.RunInVolume(t, s.app, ws.VolumeName, "echo x > /mnt/cairn/ws/elsewhere && echo hi > /mnt/cairn/ws/out/by-tool")
	await("created\tout/by-tool")
	s.ok(t, "fs", "mv", wsName, "out/by-tool", "out/renamed")
	await("moved_from\tout/by-tool")
	await("moved_to\tout/renamed")
	s.ok(t, "fs", "rm", wsName, "out/renamed")
	await("removed\tout/renamed")
}
