package main

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
	"github.com/cairn-dev/cairn/ptyshell/cast"
)

// TestShellOutlivesItsServer is issue 34's acceptance run on the real
// engine, through the real `cairn shell` in tmux, behind a front that
// sends every new connection to whichever replica is up (as a load
// balancer does). Replica A, which opened the shells, is killed (SIGKILL)
// and started again; the shells live on in their containers:
//   - vi with typed text: `cairn shell --attach ID` through replica B
//     shows the same screen as before the kill;
//   - `sleep 20; echo done-42`, its client left attached: the CLI
//     reattaches through B by itself and done-42 shows with no key
//     pressed; the recording, stored when the shell exits, covers the
//     whole session.
func TestShellOutlivesItsServer(t *testing.T) {
	st := newShellStack(t)
	opts := shellServerOpts{shell: "record: {enable: true}"}
	a := st.start(t, opts)
	b := st.start(t, opts)
	ws := a.readyWorkspace(t)
	front := newCuttableLink(t, hostOf(a.url))
	env := func(state string) tmuxtest.Options {
		return tmuxtest.Options{Width: 100, Height: 30, Env: []string{"CAIRN_URL=http://" + front.addr(),
			"CAIRN_TOKEN=" + shellAdminToken, "XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + state,
			"HOME=" + t.TempDir()}}
	}

	viState, sleepState := t.TempDir(), t.TempDir()
	vi := tmuxtest.Start(t, env(viState), st.bin, "shell", ws.Name)
	vi.WaitForText(time.Minute, "/mnt/cairn/ws #")
	vi.Type("vi /mnt/cairn/ws/kept.txt")
	vi.Keys("Enter")
	vi.WaitForText(seen, "~")
	vi.Keys("i")
	vi.Type("typed through replica A")
	vi.WaitForText(seen, "typed through replica A")
	before := stable(vi)
	viID := onlyShellSecret(t, viState)

	sleeper := tmuxtest.Start(t, env(sleepState), st.bin, "shell", ws.Name)
	sleeper.WaitForText(time.Minute, "/mnt/cairn/ws #")
	sleeper.Type("echo started-$((1+1)); sleep 20; echo done-$((40+2))")
	sleeper.Keys("Enter")
	sleeper.WaitForText(seen, "started-2") // running, not only echoed
	sleepID := onlyShellSecret(t, sleepState)

	require.NoError(t, a.cmd.Process.Kill(), "replica A dies without a word")
	_ = a.cmd.Wait() // killed
	front.point(hostOf(b.url))
	front.cut()
	restarted := st.start(t, opts)
	list, err := restarted.admin.FindShells(t.Context(), ws.ID)
	require.NoError(t, err)
	require.Len(t, list.Shells, 2, "both shells outlived replica A")

	require.NoError(t, syscall.Kill(vi.PID(), syscall.SIGKILL), "the vi client goes too")
	vi.WaitExit(seen)
	again := tmuxtest.Start(t, env(viState), st.bin, "shell", "--attach", viID)
	after := again.WaitFor("the screen as it was", time.Minute, func(screen string) bool {
		return trimScreen(screen) == before
	})
	require.Equal(t, before, trimScreen(after), "replica B renders the screen replica A showed")

	sleeper.WaitForText(time.Minute, "done-42")
	require.NotContains(t, sleeper.Capture(), "panic")
	sleeper.Type("exit")
	sleeper.Keys("Enter")
	require.Zero(t, sleeper.WaitExit(seen))
	b.closedRow(t, ws.ID, sleepID)
	played := recordingOf(t, b, ws.ID, sleepID)
	require.Contains(t, played, "started-2", "the recording starts before the kill")
	require.Contains(t, played, "done-42", "and goes on after it")

	again.Keys("Escape")
	again.WaitFor("vi's command mode", seen, func(screen string) bool { return !strings.Contains(screen, "\nI /mnt") })
	again.Type(":q!")
	again.Keys("Enter")
	again.WaitForText(seen, "/mnt/cairn/ws #")
	again.Type("exit")
	again.Keys("Enter")
	require.Zero(t, again.WaitExit(seen))
	b.closedRow(t, ws.ID, viID) // its end recorded, its container gone
}

// recordingOf downloads the shell's recording artifact and plays it.
func recordingOf(t *testing.T, s *shellServer, wsID, shellID string) string {
	t.Helper()
	arts, err := s.admin.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: wsID,
		Names: []string{"shell-" + shellID + "_cast"}})
	require.NoError(t, err)
	require.Len(t, arts, 1, "the recording is stored")
	var data bytes.Buffer
	_, err = s.admin.DownloadTo(t.Context(), arts[0].ID, &data, client.DownloadOptions{})
	require.NoError(t, err)
	var out bytes.Buffer
	_, _, err = cast.Play(&data, &out)
	require.NoError(t, err)
	return out.String()
}

func hostOf(url string) string { return strings.TrimPrefix(url, "http://") }
