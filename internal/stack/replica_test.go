package stack

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// A pair restarts in the same dirs; a commit the primary acknowledged is on
// the standby when the primary is killed; the promoted standby takes writes
// through the pair's DSN, and a later start refuses its dir.
func TestReplicatedFailover(t *testing.T) {
	t.Parallel()
	_, err := postgresBinDir()
	requireService(t, err)
	ctx := t.Context()
	dir := postgresDir(t)
	primaryDir, standbyDir := filepath.Join(dir, "primary"), filepath.Join(dir, "standby")

	began := time.Now()
	pair, err := StartReplicated(ctx, primaryDir, standbyDir, t.Output(), WithoutFsync())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pair.Stop() })
	t.Logf("primary, base backup and standby: %s", time.Since(began))
	require.NotEqual(t, pair.Primary.Port, pair.Standby.Port)

	conn, err := pgx.Connect(ctx, pair.DSN(pair.Primary.Database))
	require.NoError(t, err)
	var port int
	require.NoError(t, conn.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port))
	require.Equal(t, pair.Primary.Port, port, "the DSN reaches the primary, not the read-only standby")
	var commit string
	require.NoError(t, conn.QueryRow(ctx, "SHOW synchronous_commit").Scan(&commit))
	require.Equal(t, "on", commit, "commits wait for the standby even without fsync")
	_, err = conn.Exec(ctx, "CREATE TABLE acked (n int)")
	require.NoError(t, err)
	for n := range 50 {
		_, err := conn.Exec(ctx, "INSERT INTO acked VALUES ($1)", n)
		require.NoError(t, err)
	}
	require.NoError(t, conn.Close(ctx))

	// A restart in the same dirs finds the standby and streams again.
	require.NoError(t, pair.Stop())
	pair, err = StartReplicated(ctx, primaryDir, standbyDir, t.Output(), WithoutFsync())
	require.NoError(t, err)
	t.Cleanup(func() { _ = pair.Stop() })

	pair.Primary.Kill()
	require.NoError(t, pair.Primary.Stop(), "a killed server has nothing left to stop")
	began = time.Now()
	require.NoError(t, pair.Standby.Promote(ctx))
	t.Logf("promote: %s", time.Since(began))

	conn, err = pgx.Connect(ctx, pair.DSN(pair.Primary.Database))
	require.NoError(t, err, "the DSN reaches the promoted standby")
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM acked").Scan(&n))
	require.Equal(t, 50, n, "every acknowledged insert is on the standby")
	_, err = conn.Exec(ctx, "INSERT INTO acked VALUES (50)")
	require.NoError(t, err, "the promoted standby takes writes alone")

	_, err = StartReplicated(ctx, filepath.Join(dir, "other"), standbyDir, t.Output(), WithoutFsync())
	require.ErrorContains(t, err, "was promoted")
}
