package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// TestRealTerminalSnapshots drives the snapshots screen with the real
// binary on the real stack: P lists a workspace's snapshots; n takes one;
// one taken by another client shows with no key pressed (the events
// stream's snapshot.created); while a container mounts the volume a take
// is refused and offered live, and a restore is refused; R restores only
// after the workspace's typed name, and the volume holds the snapshot's
// tree again; F forks the workspace; D deletes a snapshot after y.
func TestRealTerminalSnapshots(t *testing.T) {
	srv, api, ws := filesStack(t, "printf 'v1\\n' > /mnt/cairn/ws/notes.txt")
	ctx := t.Context()
	p := startTUI(t, srv)
	p.WaitForText(seen, "● live", "ws-alpha", "● READY")

	t.Log("P lists the workspace's snapshots: none yet")
	p.Keys("P")
	p.WaitForText(seen, "ws-alpha ▸ snapshots (0)", "No snapshots of ws-alpha yet")

	t.Log("n takes one, named")
	p.Keys("n")
	p.WaitForText(seen, "Take a snapshot of ws-alpha")
	p.Type("before")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "took snapshot before of ws-alpha", "snapshots (1)")

	t.Log("one taken by another client shows with no key pressed")
	stacktest.RunInVolume(t, srv.App, ws.VolumeName, "printf 'v2\\n' > /mnt/cairn/ws/notes.txt && echo new > /mnt/cairn/ws/extra.txt")
	_, err := api.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: "from-cli"})
	require.NoError(t, err)
	p.WaitForText(seen, "from-cli", "snapshots (2)")

	t.Log("a container mounts the volume: the take is offered live; a restore is refused")
	stop := stacktest.StartMounting(t, srv.App, ws.VolumeName)
	p.Keys("n")
	p.WaitForText(seen, "Take a snapshot of ws-alpha")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "Volume in use", "Take it live?")
	p.Keys("y")
	p.WaitForText(time.Minute, "took live snapshot snap-", "snapshots (3)")
	p.Keys("g")
	p.WaitForText(seen, "▸ before")
	restoreFromTUI(p)
	p.WaitForText(time.Minute, "volume is mounted by running containers")
	stop()

	t.Log("R restores after the typed name: the volume holds the snapshot's tree again")
	restoreFromTUI(p)
	p.WaitForText(time.Minute, "restored snapshot before into ws-alpha")
	fc, err := api.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/notes.txt"})
	require.NoError(t, err)
	require.Equal(t, "v1\n", string(fc.Data))
	_, err = api.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/extra.txt"})
	require.Equal(t, cairn.ReasonPathNotFound, cairn.ErrorReason(err), "what the snapshot does not hold is gone")

	t.Log("F forks the workspace: a READY one holding the same tree")
	p.Keys("F")
	p.WaitForText(seen, "Fork ws-alpha")
	p.Type("ws-alpha-fork")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "forked ws-alpha as ws-alpha-fork", "fork-ws-alpha-fork")
	forks, err := api.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{"ws-alpha-fork"}})
	require.NoError(t, err)
	require.Len(t, forks, 1)
	require.Equal(t, cairn.VolumeReady, forks[0].VolumeState)
	fc, err = api.ReadFile(ctx, forks[0].ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/notes.txt"})
	require.NoError(t, err)
	require.Equal(t, "v1\n", string(fc.Data))

	t.Log("D deletes a snapshot after y")
	p.Keys("/")
	p.Type("from-cli")
	p.Keys("Enter")
	p.WaitForText(seen, "▸ from-cli")
	p.Keys("D")
	p.WaitForText(seen, "Delete snapshot from-cli of ws-alpha")
	p.Keys("y")
	p.WaitForText(seen, "deleted snapshot from-cli")
	requireNoSnapshot(t, api, ws.ID, "from-cli")
}

// restoreFromTUI asks to restore the snapshot under the cursor and types
// the workspace's name.
func restoreFromTUI(p *tmuxtest.Pane) {
	p.Keys("R")
	p.WaitForText(seen, "Restore snapshot", "Type ws-alpha to confirm")
	p.Type("ws-alpha")
	p.Keys("Enter")
}

func requireNoSnapshot(t *testing.T, api *client.Client, wsID, name string) {
	t.Helper()
	list, err := api.ListSnapshots(t.Context(), wsID)
	require.NoError(t, err)
	for _, s := range list {
		require.NotEqual(t, name, s.Name, "still listed")
	}
}
