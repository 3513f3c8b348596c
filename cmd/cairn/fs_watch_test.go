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

	w := startFsWatch(t, s, wsName, "out")
	w.forbid = "elsewhere" // only changes under the path
	w.subscribed(t, s, wsName, "out")
	stacktest.RunInVolume(t, s.app, ws.VolumeName, "echo x > /mnt/cairn/ws/elsewhere && echo hi > /mnt/cairn/ws/out/by-tool")
	w.await(t, "created\tout/by-tool")
	s.ok(t, "fs", "mv", wsName, "out/by-tool", "out/renamed")
	w.await(t, "moved_from\tout/by-tool")
	w.await(t, "moved_to\tout/renamed")
	s.ok(t, "fs", "rm", wsName, "out/renamed")
	w.await(t, "removed\tout/renamed")
}

// watchRun is a running `cairn fs watch -o table`, its lines as they come.
type watchRun struct {
	lines  chan string
	forbid string // no line may hold it
}

func startFsWatch(t *testing.T, s *cliServer, wsName, dir string) *watchRun {
	t.Helper()
	cmd := s.command(t.Context(), map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": s.token}, "fs", "watch", wsName, dir, "-o", "table")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	w := &watchRun{lines: make(chan string, 64)}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	return w
}

// next is the next line within wait; "" when none came.
func (w *watchRun) next(t *testing.T, wait time.Duration) string {
	t.Helper()
	select {
	case l, ok := <-w.lines:
		require.True(t, ok, "the watch ended")
		if w.forbid != "" {
			require.NotContains(t, l, w.forbid)
		}
		return l
	case <-time.After(wait):
		return ""
	}
}

// await reads lines until want.
func (w *watchRun) await(t *testing.T, want string) {
	t.Helper()
	for {
		l := w.next(t, time.Minute)
		require.NotEmpty(t, l, "no %q within a minute", want)
		if l == want {
			return
		}
	}
}

// subscribed returns once the watch reports a change: it makes directories
// under dir until one is reported (the server may first start a watcher).
func (w *watchRun) subscribed(t *testing.T, s *cliServer, wsName, dir string) {
	t.Helper()
	for i := 0; ; i++ {
		require.Less(t, i, 30, "the watch reported nothing")
		s.ok(t, "fs", "mkdir", wsName, fmt.Sprintf("%s/probe-%d", dir, i))
		if l := w.next(t, 2*time.Second); strings.HasPrefix(l, "created\t"+dir+"/probe-") {
			return // any probe: an earlier one's line may come late
		}
	}
}
