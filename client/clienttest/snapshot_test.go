package clienttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func TestSnapshots(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx := t.Context()
	s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/out/a.txt", []byte("alpha"))
	s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/b.txt", []byte("alpha"))
	s.PutVolumeOther(ws.ID, "/mnt/cairn/ws/fifo")

	first, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: "before"})
	require.NoError(t, err)
	require.Equal(t, 4, first.Entries, "the root, out, and two files")
	require.Equal(t, 1, first.Skipped, "the FIFO is not recorded")
	require.Equal(t, int64(10), first.Bytes)
	require.Equal(t, int64(5), first.UploadedBytes, "shared content goes up once")
	_, err = c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: "before"})
	require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
	_, err = c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: "bad name"})
	require.Equal(t, cairn.ReasonInvalidName, cairn.ErrorReason(err))

	s.SetMounts(ws.ID, 1)
	_, err = c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{})
	require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err))
	second, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Live: true})
	require.NoError(t, err)
	require.True(t, second.Live)
	require.Regexp(t, `^snap-`, second.Name, "a name is made up")
	require.Zero(t, second.UploadedBytes, "nothing changed")
	_, err = c.RestoreSnapshot(ctx, ws.ID, first.ID)
	require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err), "a restore is never live")
	s.SetMounts(ws.ID, 0)

	list, err := c.ListSnapshots(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, []string{first.ID, second.ID}, []string{list[0].ID, list[1].ID}, "oldest first")

	s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/out/a.txt", []byte("changed"))
	s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/new.txt", []byte("new"))
	out, err := c.RestoreSnapshot(ctx, ws.ID, first.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.RestoreResult{SnapshotID: first.ID, Entries: 4, Bytes: 10}, *out)
	b, _ := s.VolumeFile(ws.ID, "/mnt/cairn/ws/out/a.txt")
	require.Equal(t, "alpha", string(b))
	_, ok := s.VolumeFile(ws.ID, "/mnt/cairn/ws/new.txt")
	require.False(t, ok, "what the snapshot does not hold is gone")
	_, err = c.RestoreSnapshot(ctx, ws.ID, "no-such")
	require.Equal(t, cairn.ReasonSnapshotNotFound, cairn.ErrorReason(err))

	fork, err := c.ForkWorkspace(ctx, ws.ID, cairn.WorkspaceFork{Name: "ws-fork"})
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeReady, fork.VolumeState)
	b, _ = s.VolumeFile(fork.ID, "/mnt/cairn/ws/b.txt")
	require.Equal(t, "alpha", string(b))
	_, err = c.ForkWorkspace(ctx, ws.ID, cairn.WorkspaceFork{Name: "ws-fork"})
	require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
	list, _ = c.ListSnapshots(ctx, ws.ID)
	require.Equal(t, "fork-ws-fork", list[2].Name, "the fork's snapshot is kept")

	require.NoError(t, c.DeleteSnapshot(ctx, first.ID))
	_, err = c.GetSnapshot(ctx, first.ID)
	require.Equal(t, cairn.ReasonSnapshotNotFound, cairn.ErrorReason(err))
	require.Equal(t, cairn.ReasonSnapshotNotFound, cairn.ErrorReason(c.DeleteSnapshot(ctx, first.ID)))

	none := s.AddWorkspace("ws-none", cairn.VolumeNone)
	_, err = c.CreateSnapshot(ctx, none.ID, cairn.SnapshotCreate{})
	require.Equal(t, cairn.ReasonVolumeNotReady, cairn.ErrorReason(err))
	_, err = c.ListSnapshots(ctx, "no-such")
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

func TestSnapshotEvents(t *testing.T) {
	t.Parallel()
	_, c, ws := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stream, err := c.Events(ctx, cairn.EventFilter{})
	require.NoError(t, err)
	defer func() { require.NoError(t, stream.Close()) }()
	ev, err := stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventHello, ev.Type)
	snap, err := c.CreateSnapshot(ctx, ws.ID, cairn.SnapshotCreate{Name: "s1"})
	require.NoError(t, err)
	ev, err = stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventSnapshotCreated, ev.Type)
	require.Equal(t, "s1", ev.Snapshot.Name)
	require.NoError(t, c.DeleteSnapshot(ctx, snap.ID))
	ev, err = stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventSnapshotDeleted, ev.Type)
	require.Equal(t, snap.ID, ev.ID)
	require.Equal(t, ws.ID, ev.WorkspaceID)
}
