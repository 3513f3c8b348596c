package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// The snapshot and lifecycle commands through the built binary on the real
// stack: a snapshot by name, restore by name, a fork, the lifecycle flags,
// and the refusals' exit codes.
func TestCLISnapshots(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	name := uniqueName("snaps")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", name, "--ttl", "1h", "--archive-idle-after", "0s"), "workspace")
	require.Equal(t, int64(3600), *ws.TTLSecs)
	require.Equal(t, int64(0), *ws.ArchiveIdleAfterSecs)
	require.WithinDuration(t, ws.CreatedAt.Add(time.Hour), *ws.ExpiresAt, time.Second)
	s.ok(t, "ws", "setup", name)
	stacktest.RunInVolume(t, s.app, ws.VolumeName, "echo one > /mnt/cairn/ws/file && mkdir /mnt/cairn/ws/dir")

	snap := field[cairn.Snapshot](t, s.json(t, "ws", "snapshot", name, "--name", "first"), "snapshot")
	require.Equal(t, "first", snap.Name)
	require.Equal(t, int64(4), snap.UploadedBytes)
	require.Contains(t, s.ok(t, "ws", "snapshots", name, "-o", "table").stdout, "first")
	s.fails(t, 4, "ws", "snapshot", name, "--name", "first") // name_taken

	stacktest.RunInVolume(t, s.app, ws.VolumeName, "echo two > /mnt/cairn/ws/file && rm -r /mnt/cairn/ws/dir")
	restored := s.json(t, "ws", "restore", name, "first")
	require.Equal(t, snap.Entries, field[cairn.RestoreResult](t, restored, "restore").Entries)
	require.Equal(t, "one", stacktest.RunInVolume(t, s.app, ws.VolumeName, "cat /mnt/cairn/ws/file && test -d /mnt/cairn/ws/dir"))
	s.fails(t, 3, "ws", "restore", name, "no-such-snapshot")

	fork := field[cairn.Workspace](t, s.json(t, "ws", "fork", name, name+"-fork"), "workspace")
	require.Equal(t, cairn.VolumeReady, fork.VolumeState)
	require.Equal(t, "one", stacktest.RunInVolume(t, s.app, fork.VolumeName, "cat /mnt/cairn/ws/file"))
	s.ok(t, "ws", "snapshots", "rm", name, "first")
	require.NotContains(t, s.ok(t, "ws", "snapshots", name, "-o", "name").stdout, snap.ID)

	touched := field[cairn.Workspace](t, s.json(t, "ws", "touch", name), "workspace")
	require.True(t, touched.ExpiresAt.After(*ws.ExpiresAt))
	cleared := field[cairn.Workspace](t, s.json(t, "ws", "lifecycle", name), "workspace")
	require.Nil(t, cleared.ExpiresAt)
	require.Nil(t, cleared.TTLSecs)
	s.fails(t, 2, "ws", "lifecycle", name, "--ttl", "1500ms")
	s.fails(t, 2, "ws", "lifecycle", name, "--ttl", "1h", "--expires-at", "2099-01-01T00:00:00Z")
}
