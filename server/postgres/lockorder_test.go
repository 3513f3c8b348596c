package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// TestWorkspaceDeleteTakesArtifactsFirst runs an artifact delete and a
// workspace delete in the lock order the service uses: the artifact
// writer holds its row, then (through the kept counts) wants the workspace
// row; the workspace delete locks the artifact rows before its own row, so
// it waits instead of deadlocking, and both transactions commit.
func TestWorkspaceDeleteTakesArtifactsFirst(t *testing.T) {
	t.Parallel()
	db, ws, dsn := setupWorkspace(t)
	ctx := context.Background()
	a := newArtifact(ws, "held", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))
	require.NoError(t, db.InsertArtifact(ctx, newArtifact(ws, "other", cairn.Now())))

	locked, proceed := make(chan struct{}), make(chan struct{})
	artifactDone := make(chan error, 1)
	go func() {
		artifactDone <- db.WithTx(ctx, func(st service.Store) error {
			if _, err := st.LockArtifactRow(ctx, a.ID); err != nil {
				return err
			}
			close(locked)
			<-proceed
			return st.DeleteArtifact(ctx, a.ID) // the counts trigger updates the workspace row
		})
	}()
	<-locked
	workspaceDone := make(chan error, 1)
	go func() {
		workspaceDone <- db.WithTx(ctx, func(st service.Store) error {
			if err := st.LockArtifactRows(ctx, ws.ID); err != nil {
				return err
			}
			if _, err := st.LockWorkspaceRow(ctx, ws.ID); err != nil {
				return err
			}
			return st.DeleteWorkspace(ctx, ws.ID, cairn.Now())
		})
	}()
	require.Eventually(t, func() bool { return lockWaiters(t, dsn) == 1 }, 30*time.Second, 10*time.Millisecond,
		"the workspace delete waits for the held artifact row")
	close(proceed)
	require.NoError(t, <-artifactDone)
	require.NoError(t, <-workspaceDone)
	_, err := db.FindWorkspace(ctx, ws.ID)
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

// lockWaiters counts the sessions of this test's database waiting on a
// row or transaction lock.
func lockWaiters(t *testing.T, dsn string) int {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n))
	return n
}
