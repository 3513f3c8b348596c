package postgres_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// newExec is a row of ws served by instance.
func newExec(id string, ws *cairn.Workspace, instance string) *service.ExecRow {
	return &service.ExecRow{ID: id, WorkspaceID: ws.ID, Container: "cairn.exec." + ws.ID + "." + id,
		TokenName: "ops", ClientAddr: "192.0.2.7:50123", Instance: instance, Process: "P-" + instance, Argv0: "make"}
}

func execIDs(rows []*service.ExecRow) []string {
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	slices.Sort(ids)
	return ids
}

// TestExecRegistry: rows round-trip and list by instance; a delete claims
// a row once; an exec counts as lost only when its instance has no live
// renewal and it is older than the renewal window, both by the database's
// clock.
func TestExecRegistry(t *testing.T) {
	t.Parallel()
	db, dsn := setup(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	sql := func(q string) {
		t.Helper()
		_, err := conn.Exec(ctx, q)
		require.NoError(t, err)
	}
	ws := insertWorkspaces(t, db, "execs")[0]
	before := time.Now()
	row := newExec("E1", ws, "replica-a")
	require.NoError(t, db.InsertExec(ctx, row))
	require.NoError(t, db.InsertExec(ctx, newExec("E2", ws, "replica-b")))
	require.NoError(t, db.InsertExec(ctx, newExec("E3", ws, "replica-c")))
	require.NoError(t, db.SetExecStarted(ctx, "E1"))

	got, err := db.FindExecRows(ctx, "replica-a")
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.WithinDuration(t, before, got[0].CreatedAt, time.Minute, "created now, by the database's clock")
	row.Started, row.CreatedAt = true, got[0].CreatedAt
	require.Equal(t, row, got[0])

	t.Run("WorkspaceGone", func(t *testing.T) {
		err := db.InsertExec(ctx, newExec("E9", &cairn.Workspace{ID: "00000000-0000-0000-0000-000000000000"}, "replica-a"))
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
	})

	lost, err := db.LostExecRows(ctx, 3*time.Minute)
	require.NoError(t, err)
	require.Empty(t, lost, "rows younger than the window are never lost")

	sql(`UPDATE execs SET created_at = now() - interval '1 hour' WHERE id IN ('E1', 'E2')`)
	lost, err = db.LostExecRows(ctx, 3*time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{"E1", "E2"}, execIDs(lost), "no instance has renewed")

	require.NoError(t, db.RenewInstance(ctx, "replica-a", 3*time.Minute))
	lost, err = db.LostExecRows(ctx, 3*time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{"E2"}, execIDs(lost), "a renewed instance's execs are live")

	sql(`UPDATE instances SET renew_by = now() - interval '1 second' WHERE name = 'replica-a'`) // its renewal lapsed
	lost, err = db.LostExecRows(ctx, 3*time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{"E1", "E2"}, execIDs(lost))
	require.NoError(t, db.RenewInstance(ctx, "replica-a", time.Minute), "a renewal revives a lapsed row")
	lost, err = db.LostExecRows(ctx, 3*time.Minute)
	require.NoError(t, err)
	require.Equal(t, []string{"E2"}, execIDs(lost))

	deleted, err := db.DeleteExec(ctx, "E2")
	require.NoError(t, err)
	require.True(t, deleted)
	deleted, err = db.DeleteExec(ctx, "E2")
	require.NoError(t, err)
	require.False(t, deleted, "a second replica's claim finds nothing")

	require.NoError(t, db.DeleteWorkspace(ctx, ws.ID, cairn.Now()))
	got, err = db.FindExecRows(ctx, "replica-a")
	require.NoError(t, err)
	require.Empty(t, got, "a deleted workspace takes its execs' rows")
}
