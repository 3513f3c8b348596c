package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// TestShellReattachRefusedAfterARestart: the server under an open v2
// `cairn shell` is killed and a new one starts on the same database; the
// shell was killed meanwhile (its container removed), so the CLI's
// reattach is refused with shell_not_found. The CLI ends with exit code 3
// and one line on stderr naming the refusal — no panic, no stack trace.
func TestShellReattachRefusedAfterARestart(t *testing.T) {
	st := newShellStack(t)
	a := st.start(t, shellServerOpts{})
	ws := a.readyWorkspace(t)
	link := newCuttableLink(t, strings.TrimPrefix(a.url, "http://"))
	state := t.TempDir()
	stderr := filepath.Join(t.TempDir(), "stderr")
	size := tmuxtest.Options{Width: 100, Height: 30, Env: []string{"CAIRN_URL=http://" + link.addr(), "CAIRN_TOKEN=" + shellAdminToken,
		"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state, "HOME=" + t.TempDir()}}
	// stdin and stdout are the terminal; stderr goes to a file, where the
	// whole of it can be read.
	p := tmuxtest.Start(t, size, "sh", "-c", `exec "$0" shell "$1" 2>"$2"`, st.bin, ws.Name, stderr)
	p.WaitForText(time.Minute, "/mnt/cairn/ws #")
	id := onlyShellSecret(t, state)

	link.point("") // until the shell is gone, the CLI's reattach finds no server
	require.NoError(t, a.cmd.Process.Kill())
	_ = a.cmd.Wait() // killed: its status says only that
	p.WaitForText(seen, "[cairn: connection lost — reconnecting…]")

	removeShellContainers(t, st)
	b := st.start(t, shellServerOpts{})
	err := b.admin.KillShell(t.Context(), id)
	if err != nil {
		require.Equal(t, cairn.ReasonShellNotFound, cairn.ErrorReason(err), "the new server knows no such shell: %v", err)
	}
	link.point(strings.TrimPrefix(b.url, "http://"))

	require.Equal(t, int(exitNotFound), p.WaitExit(time.Minute), "the exit code of a 404")
	out, err := os.ReadFile(stderr)
	require.NoError(t, err)
	require.NotContains(t, string(out), "panic:")
	require.NotContains(t, string(out), "goroutine ")
	line, rest, _ := strings.Cut(string(out), "\n")
	require.Empty(t, rest, "one line on stderr: %q", out)
	require.True(t, strings.HasPrefix(line, "cairn: shell "+id+" could not be reattached: "), line)
	require.Contains(t, line, "(shell_not_found, HTTP 404")
}

// removeShellContainers removes every shell container of the stack's app,
// as an operator's `docker rm -f` would.
func removeShellContainers(t *testing.T, st *shellStack) {
	t.Helper()
	list, err := st.docker.ContainerList(t.Context(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", "cairn.app="+st.app), filters.Arg("label", "cairn.kind=shell"))})
	require.NoError(t, err)
	require.NotEmpty(t, list, "the shell's container")
	for _, c := range list {
		require.NoError(t, st.docker.ContainerRemove(t.Context(), c.ID, container.RemoveOptions{Force: true}))
	}
}
