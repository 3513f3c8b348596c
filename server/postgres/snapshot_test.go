package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service"
)

func digest(c byte) string { return strings.Repeat(string(c), 64) }

func snapshotAudit() *cairn.AuditEvent {
	return &cairn.AuditEvent{ID: uuid.NewString(), Type: cairn.AuditSnapshotCreated, Metadata: map[string]any{}, CreatedAt: cairn.Now()}
}

// commitSnapshot pends the objects and commits a snapshot that uploaded
// content into blob and names refs.
func commitSnapshot(t *testing.T, db *postgres.DB, ws *cairn.Workspace, name, blob, manifest string,
	content map[string]service.ContentLocation, refs ...string) (*cairn.Snapshot, error) {
	t.Helper()
	ctx := t.Context()
	objects := []string{manifest}
	require.NoError(t, db.PendSnapshotObject(ctx, manifest, 10))
	if blob != "" {
		require.NoError(t, db.PendSnapshotObject(ctx, blob, 100))
		objects = append(objects, blob)
	}
	snap := &cairn.Snapshot{ID: uuid.NewString(), WorkspaceID: ws.ID, Name: name, ManifestSHA256: "m", CreatedAt: cairn.Now()}
	err := db.CommitSnapshot(ctx, snap, service.SnapshotCommit{Objects: objects, ManifestKey: manifest, Content: content, Refs: refs},
		snapshotAudit())
	return snap, err
}

// TestSnapshotContentLifecycle: content is shared by digest, spared while
// a snapshot names it or a run touched it, and reaped after; objects go
// once nothing names them, and a claimed PENDING object fails its commit.
func TestSnapshotContentLifecycle(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := t.Context()
	a, b := digest('a'), digest('b')

	first, err := commitSnapshot(t, db, ws, "first", "blob1", "man1", map[string]service.ContentLocation{
		a: {ObjectKey: "blob1", Size: 40, Bundled: true}, b: {ObjectKey: "blob1", Offset: 40, Size: 60, Bundled: true},
	}, a, b)
	require.NoError(t, err)
	present, err := db.PresentContent(ctx, []string{a, digest('c')})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{a: true}, present)

	second, err := commitSnapshot(t, db, ws, "second", "", "man2", nil, a)
	require.NoError(t, err, "content of an earlier snapshot is named, not stored again")
	_, err = commitSnapshot(t, db, ws, "second", "", "man3", nil, a)
	require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
	_, err = commitSnapshot(t, db, ws, "dangling", "", "man4", nil, digest('d'))
	require.Equal(t, cairn.ReasonSnapshotCorrupt, cairn.ErrorReason(err), "a digest without content is refused")

	list, err := db.FindSnapshots(ctx, ws.ID)
	require.NoError(t, err)
	require.Len(t, list, 2)
	row, err := db.FindSnapshot(ctx, first.ID)
	require.NoError(t, err)
	require.Equal(t, "man1", row.ManifestKey)

	later := time.Now().Add(time.Hour)
	require.NoError(t, db.DeleteSnapshot(ctx, first.ID, snapshotAudit()))
	reaped, err := db.ReapSnapshotContent(ctx, later)
	require.NoError(t, err)
	require.Equal(t, 1, reaped, "b went; a is still named by the second snapshot")
	loc, err := db.LocateContent(ctx, []string{a, b})
	require.NoError(t, err)
	require.Equal(t, map[string]service.ContentLocation{a: {ObjectKey: "blob1", Size: 40, Bundled: true}}, loc)
	keys, err := db.ClaimDoomedSnapshotObjects(ctx, later, later, 100)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"man1", "man3", "man4"}, keys,
		"the first's manifest, and the manifests of the refused commits; blob1 still holds a")

	require.NoError(t, db.DeleteSnapshot(ctx, second.ID, snapshotAudit()))
	_, err = db.ReapSnapshotContent(ctx, time.Now().Add(-time.Hour))
	require.NoError(t, err)
	loc, err = db.LocateContent(ctx, []string{a})
	require.NoError(t, err)
	require.Len(t, loc, 1, "content used within the grace stays")
	reaped, err = db.ReapSnapshotContent(ctx, later)
	require.NoError(t, err)
	require.Equal(t, 1, reaped)
	keys, err = db.ClaimDoomedSnapshotObjects(ctx, later, later, 100)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"blob1", "man2"}, keys)

	t.Run("LateCommitOfAClaimedObjectFails", func(t *testing.T) {
		require.NoError(t, db.PendSnapshotObject(ctx, "late", 5))
		keys, err := db.ClaimDoomedSnapshotObjects(ctx, time.Now().Add(-time.Hour), later, 100)
		require.NoError(t, err)
		require.Equal(t, []string{"late"}, keys)
		snap := &cairn.Snapshot{ID: uuid.NewString(), WorkspaceID: ws.ID, Name: "late", ManifestSHA256: "m", CreatedAt: cairn.Now()}
		err = db.CommitSnapshot(ctx, snap, service.SnapshotCommit{Objects: []string{"late"}, ManifestKey: "late"}, snapshotAudit())
		require.Equal(t, cairn.ReasonSidecarTimeout, cairn.ErrorReason(err))
		_, err = db.FindSnapshot(ctx, snap.ID)
		require.Equal(t, cairn.ReasonSnapshotNotFound, cairn.ErrorReason(err))
	})
}

// TestSnapshotEvents: a snapshot's insert and delete reach the outbox with
// its workspace, and a workspace delete takes its snapshots.
func TestSnapshotEvents(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := context.Background()
	takeAll(t, db)
	snap, err := commitSnapshot(t, db, ws, "s", "", "man", nil)
	require.NoError(t, err)
	require.NoError(t, db.DeleteWorkspace(ctx, ws.ID, cairn.Now()))
	var kinds []string
	for _, c := range takeAll(t, db) {
		if c.Kind == "snapshot" {
			require.Equal(t, snap.ID, c.ID)
			require.Equal(t, ws.ID, c.WorkspaceID)
			kinds = append(kinds, c.Op)
		}
	}
	require.Equal(t, []string{"INSERT", "DELETE"}, kinds)
	got, err := db.SnapshotsByID(ctx, []string{snap.ID})
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestArchivedWorkspaceDeletes: a workspace whose volume is archived to one
// of its snapshots deletes with it, while the snapshot alone cannot go.
func TestArchivedWorkspaceDeletes(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := t.Context()
	snap, err := commitSnapshot(t, db, ws, "archive", "", "man", nil)
	require.NoError(t, err)
	ws.ArchivedSnapshotID = &snap.ID
	require.NoError(t, db.UpdateWorkspace(ctx, ws))
	err = db.DeleteSnapshot(ctx, snap.ID, snapshotAudit())
	require.Equal(t, cairn.ReasonSnapshotInUse, cairn.ErrorReason(err))
	require.NoError(t, db.DeleteWorkspace(ctx, ws.ID, cairn.Now()))
	_, err = db.FindSnapshot(ctx, snap.ID)
	require.Equal(t, cairn.ReasonSnapshotNotFound, cairn.ErrorReason(err))
}
