package clienttest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client/clienttest"
)

// The lifecycle is kept as docs/api.md says: a ttl gives the expiry from
// the create or the touch, a setting replaces every field, a fixed expiry
// stays put on a touch, and the bounds are cairn's.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)
	clock := now
	s := clienttest.New(t, clienttest.WithClock(func() time.Time { return clock }))
	c := s.Client(t)
	ctx := t.Context()
	ttl, idle := int64(3600), int64(86400)

	w, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "scratch",
		Lifecycle: cairn.Lifecycle{TTLSecs: &ttl, ArchiveIdleAfterSecs: &idle}})
	require.NoError(t, err)
	require.Equal(t, ttl, *w.TTLSecs)
	require.Equal(t, idle, *w.ArchiveIdleAfterSecs)
	require.WithinDuration(t, now.Add(time.Hour), *w.ExpiresAt, time.Millisecond, "the ttl runs from the create")
	require.WithinDuration(t, now, w.LastActiveAt, time.Millisecond)

	clock = now.Add(30 * time.Minute)
	touched, err := c.TouchWorkspace(ctx, w.ID)
	require.NoError(t, err)
	require.WithinDuration(t, clock.Add(time.Hour), *touched.ExpiresAt, time.Millisecond, "a touch moves a ttl's expiry")
	require.WithinDuration(t, clock, touched.LastActiveAt, time.Millisecond)
	require.True(t, touched.UpdatedAt.After(w.UpdatedAt))

	fixed := clock.Add(48 * time.Hour)
	set, err := c.SetWorkspaceLifecycle(ctx, w.ID, cairn.Lifecycle{ExpiresAt: &fixed})
	require.NoError(t, err)
	require.Nil(t, set.TTLSecs, "a field left out is cleared")
	require.Nil(t, set.ArchiveIdleAfterSecs)
	require.True(t, fixed.Equal(*set.ExpiresAt))
	touched, err = c.TouchWorkspace(ctx, w.ID)
	require.NoError(t, err)
	require.True(t, fixed.Equal(*touched.ExpiresAt), "without a ttl a touch leaves the expiry")

	past := clock.Add(-time.Minute)
	for name, l := range map[string]cairn.Lifecycle{
		"Both":     {TTLSecs: &ttl, ExpiresAt: &fixed},
		"Past":     {ExpiresAt: &past},
		"ZeroTTL":  {TTLSecs: new(int64)},
		"Negative": {ArchiveIdleAfterSecs: func() *int64 { n := int64(-1); return &n }()},
	} {
		_, err := c.SetWorkspaceLifecycle(ctx, w.ID, l)
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err), name)
	}
	_, err = c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "bad", Lifecycle: cairn.Lifecycle{ExpiresAt: &past}})
	require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
	_, err = c.TouchWorkspace(ctx, "no-such")
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

// ArchiveVolume archives as the maintainer does: the workspace is NONE
// with its archive's ID, the snapshot cannot be deleted while it holds
// it, and the next setup restores it.
func TestArchiveAndRestore(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx := t.Context()
	s.PutVolumeFile(ws.ID, "/mnt/cairn/ws/a.txt", []byte("kept"))
	snap, err := s.ArchiveVolume(ws.ID)
	require.NoError(t, err)
	require.Regexp(t, `^archive-`, snap.Name)
	d, err := c.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeNone, d.Workspace.VolumeState)
	require.Equal(t, snap.ID, *d.Workspace.ArchivedSnapshotID)
	require.Equal(t, cairn.ReasonSnapshotInUse, cairn.ErrorReason(c.DeleteSnapshot(ctx, snap.ID)))

	require.NoError(t, c.SetupVolume(ctx, ws.ID))
	d, err = c.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeReady, d.Workspace.VolumeState)
	require.Nil(t, d.Workspace.ArchivedSnapshotID, "the setup forgets the archive")
	b, ok := s.VolumeFile(ws.ID, "/mnt/cairn/ws/a.txt")
	require.True(t, ok)
	require.Equal(t, "kept", string(b), "and restores it")
	require.NoError(t, c.DeleteSnapshot(ctx, snap.ID), "the snapshot stays, deletable again")
}

// Warn sends a warning frame with the workspace, numbered as changes are.
func TestWarn(t *testing.T) {
	t.Parallel()
	s, c, ws := setup(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	stream, err := c.Events(ctx, cairn.EventFilter{})
	require.NoError(t, err)
	defer func() { require.NoError(t, stream.Close()) }()
	ev, err := stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventHello, ev.Type)
	require.True(t, s.Warn(ws.ID, cairn.EventWorkspaceExpiring))
	require.True(t, s.Warn(ws.ID, cairn.EventWorkspaceArchiving))
	require.False(t, s.Warn("no-such", cairn.EventWorkspaceExpiring))
	for i, want := range []cairn.EventType{cairn.EventWorkspaceExpiring, cairn.EventWorkspaceArchiving} {
		ev, err = stream.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, want, ev.Type)
		require.Equal(t, int64(i+1), ev.Seq)
		require.Equal(t, ws.ID, ev.Workspace.ID)
		require.True(t, ev.IsWarning())
	}
}
