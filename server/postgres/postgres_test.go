package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/migrations"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service"
)

// setup opens a store on a fresh migrated database.
func setup(t *testing.T) (*postgres.DB, string) {
	t.Helper()
	dsn := stacktest.Database(t)
	db, err := postgres.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db, dsn
}

func newWorkspace(name string, created time.Time) *cairn.Workspace {
	id := uuid.NewString()
	return &cairn.Workspace{ID: id, Name: name, VolumeName: "cairn-" + id, VolumeState: cairn.VolumeNone,
		CreatedAt: created, UpdatedAt: created, LastActiveAt: created}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	_, dsn := setup(t)
	ctx := context.Background()

	t.Run("Idempotent", func(t *testing.T) {
		v, err := postgres.Migrate(ctx, dsn)
		require.NoError(t, err)
		files, err := fs.Glob(migrations.FS, "*.sql")
		require.NoError(t, err)
		require.Equal(t, int32(len(files)), v, "every embedded migration is applied")
	})
	t.Run("ConcurrentMigratorsSerialise", func(t *testing.T) {
		fresh := stacktest.Postgres(t)
		name := "mig_" + uuid.NewString()[:8]
		require.NoError(t, fresh.CreateDatabase(ctx, name, ""))
		t.Cleanup(func() {
			if err := fresh.DropDatabase(context.Background(), name); err != nil {
				t.Errorf("drop database %s: %v", name, err)
			}
		})

		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() { _, errs[i] = postgres.Migrate(ctx, fresh.DSN(name)) })
		}
		wg.Wait()
		require.NoError(t, errors.Join(errs...))
		conn, err := pgx.Connect(ctx, fresh.DSN(name))
		require.NoError(t, err)
		defer conn.Close(ctx)
		var tables int
		require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
			WHERE table_name IN ('workspaces','artifacts','audit_system_events','released_objects')`).Scan(&tables))
		require.Equal(t, 4, tables)
	})
}

func TestWorkspaceRoundTrip(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	size := int64(1 << 30)
	desc := ""
	ws := newWorkspace("alpha", cairn.Now())
	ws.Description = &desc
	ws.VolumeMetadata = &cairn.VolumeMetadata{SizeBytes: &size}
	require.NoError(t, db.InsertWorkspace(ctx, ws))

	got, err := db.FindWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, ws, got, "every field survives, an empty description included")

	t.Run("VolumeIssueSetAndCleared", func(t *testing.T) {
		ws := newWorkspace("stranded", cairn.Now())
		require.NoError(t, db.InsertWorkspace(ctx, ws))
		conn := listen(t, db)
		ws.VolumeState = cairn.VolumeReady
		ws.VolumeIssue = &cairn.VolumeIssue{Reason: cairn.ReasonVolumeNodeUnavailable,
			Detail: "the workspace's volume is on node n1, which is cordoned"}
		require.NoError(t, db.UpdateWorkspace(ctx, ws))
		require.Equal(t, []string{"workspace UPDATE " + ws.ID + " " + ws.ID}, payloads(t, conn, 1),
			"subscribers hear of it")
		got, err := db.FindWorkspace(ctx, ws.ID)
		require.NoError(t, err)
		require.Equal(t, ws, got)
		loaded, err := db.WorkspacesByID(ctx, []string{ws.ID})
		require.NoError(t, err)
		require.Equal(t, []*cairn.Workspace{ws}, loaded, "an event frame carries it")

		ws.VolumeIssue = nil
		require.NoError(t, db.UpdateWorkspace(ctx, ws))
		got, err = db.FindWorkspace(ctx, ws.ID)
		require.NoError(t, err)
		require.Nil(t, got.VolumeIssue)
	})
	t.Run("ErrNameTaken", func(t *testing.T) {
		err := db.InsertWorkspace(ctx, newWorkspace("alpha", cairn.Now()))
		require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(err))
		require.Contains(t, cairn.ErrorDetail(err), "'alpha'")
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		_, err := db.FindWorkspace(ctx, "no-such-id")
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		err = db.UpdateWorkspace(ctx, newWorkspace("ghost", cairn.Now()))
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
	})
	t.Run("UpdateNameTaken", func(t *testing.T) {
		other := newWorkspace("beta", cairn.Now())
		require.NoError(t, db.InsertWorkspace(ctx, other))
		other.Name = "alpha"
		require.Equal(t, cairn.ReasonNameTaken, cairn.ErrorReason(db.UpdateWorkspace(ctx, other)))
	})
}

func TestFindWorkspaces(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	// Equal creation times: the ID breaks the tie, so paging is stable.
	at := cairn.Now()
	var all []*cairn.Workspace
	for i := range 6 {
		ws := newWorkspace(fmt.Sprintf("ws-%d", i), at)
		if i%2 == 0 {
			ws.VolumeState = cairn.VolumeReady
		}
		require.NoError(t, db.InsertWorkspace(ctx, ws))
		all = append(all, ws)
	}
	sortByID(all)

	list, err := db.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
	require.NoError(t, err)
	require.Equal(t, ids(all), ids(list))

	list, err = db.FindWorkspaces(ctx, cairn.WorkspaceFilter{Page: cairn.Page{Offset: 2, Limit: 3}})
	require.NoError(t, err)
	require.Equal(t, ids(all[2:5]), ids(list))

	list, err = db.FindWorkspaces(ctx, cairn.WorkspaceFilter{Names: []string{"ws-1", "ws-2", "nope"}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"ws-1", "ws-2"}, names(list))

	list, err = db.FindWorkspaces(ctx, cairn.WorkspaceFilter{VolumeStates: []cairn.VolumeState{cairn.VolumeReady}})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"ws-0", "ws-2", "ws-4"}, names(list))
}

func TestUnpagedListStopsPastTheLimit(t *testing.T) {
	t.Parallel()
	db, dsn := setup(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
		SELECT 'id-' || i, 'n-' || i, 'v-' || i, now(), now() FROM generate_series(1, 10050) i`)
	require.NoError(t, err)

	list, err := db.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
	require.NoError(t, err)
	require.Len(t, list, cairn.MaxUnpagedListLength+1, "one row past the limit tells the service to refuse")
}

func TestDeleteWorkspaceReleasesArtifactObjects(t *testing.T) {
	t.Parallel()
	db, dsn := setup(t)
	ctx := context.Background()
	ws := newWorkspace("doomed", cairn.Now())
	require.NoError(t, db.InsertWorkspace(ctx, ws))
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size,
		content_written_at, created_at, updated_at) VALUES
		('A1', $1, 'a', 'store/k1', 'text/plain', 1, now(), now(), now()),
		('A2', $1, 'b', 'store/k2', 'text/plain', 1, now(), now(), now())`, ws.ID)
	require.NoError(t, err)

	at := cairn.Now()
	require.NoError(t, db.WithTx(ctx, func(st service.Store) error { return st.DeleteWorkspace(ctx, ws.ID, at) }))

	var artifacts, released int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM artifacts`).Scan(&artifacts))
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM released_objects
		WHERE workspace_id = $1 AND released_at = $2 AND object_key IN ('store/k1','store/k2')`, ws.ID, at).Scan(&released))
	require.Zero(t, artifacts, "artifact rows cascade")
	require.Equal(t, 2, released)

	err = db.DeleteWorkspace(ctx, ws.ID, at)
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

func TestWithTxRollsBack(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := context.Background()
	ws := newWorkspace("rolled-back", cairn.Now())
	boom := errors.New("boom")
	err := db.WithTx(ctx, func(st service.Store) error {
		require.NoError(t, st.InsertWorkspace(ctx, ws))
		require.NoError(t, st.InsertAudit(ctx, &cairn.AuditEvent{ID: "E1", Type: cairn.AuditNewWorkspace,
			Metadata: map[string]any{"workspace_id": ws.ID}, CreatedAt: cairn.Now()}))
		return boom
	})
	require.ErrorIs(t, err, boom)
	_, err = db.FindWorkspace(ctx, ws.ID)
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

// waiting reports whether a session waits for the advisory lock key: an
// ungranted pg_locks row (classid and objid hold its two 32-bit halves).
func waiting(t *testing.T, dsn string, key int64) bool {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND NOT granted AND classid::bigint = $1 AND objid::bigint = $2`,
		int64(uint64(key)>>32), int64(uint32(key))).Scan(&n))
	return n > 0
}

func TestLockWorkspace(t *testing.T) {
	t.Parallel()
	db, dsn := setup(t)
	ctx := context.Background()
	// busy tries a lock that must stay refused; short, since it fails by
	// timing out.
	busy := func(id string, mode service.LockMode) error {
		c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		release, err := db.LockWorkspace(c, id, mode)
		if err == nil {
			release()
		}
		return err
	}
	// take takes a lock that must be granted; a failing test still releases
	// it, or closing the pool would wait for it forever.
	take := func(id string, mode service.LockMode) func() {
		release, err := db.LockWorkspace(ctx, id, mode)
		require.NoError(t, err)
		var once sync.Once
		t.Cleanup(func() { once.Do(release) })
		return func() { once.Do(release) }
	}

	t.Run("SharedHoldersCoexist", func(t *testing.T) {
		r1 := take("ws-shared", service.LockShared)
		r2 := take("ws-shared", service.LockShared)
		require.Equal(t, cairn.ReasonWorkspaceBusy, cairn.ErrorReason(busy("ws-shared", service.LockExclusive)),
			"exclusive waits for shared holders")
		r1()
		r2()
		take("ws-shared", service.LockExclusive)()
	})
	t.Run("ExclusiveExcludes", func(t *testing.T) {
		release := take("ws-excl", service.LockExclusive)
		require.Equal(t, cairn.ReasonWorkspaceBusy, cairn.ErrorReason(busy("ws-excl", service.LockShared)))
		take("ws-other", service.LockExclusive)()

		acquired := make(chan error, 1)
		go func() {
			r, err := db.LockWorkspace(ctx, "ws-excl", service.LockExclusive)
			if err == nil {
				r()
			}
			acquired <- err
		}()
		// The waiter is blocked once Postgres shows its request ungranted.
		require.Eventually(t, func() bool { return waiting(t, dsn, postgres.LockKey("cairn.ws:ws-excl")) },
			30*time.Second, 10*time.Millisecond, "the second locker waits in Postgres")
		select {
		case err := <-acquired:
			t.Fatalf("a waiter was granted a held lock (err %v)", err)
		default:
		}
		release()
		select {
		case err := <-acquired:
			require.NoError(t, err, "the waiter gets the lock after its release")
		case <-time.After(30 * time.Second):
			t.Fatal("a waiter did not get the lock after its release")
		}
	})
	t.Run("TryLock", func(t *testing.T) {
		release := take("ws-try", service.LockShared)
		_, ok, err := db.TryLockWorkspace(ctx, "ws-try")
		require.NoError(t, err)
		require.False(t, ok, "a held lock is not granted")
		release()
		unlock, ok, err := db.TryLockWorkspace(ctx, "ws-try")
		require.NoError(t, err)
		require.True(t, ok)
		unlock()
	})
}

func TestPing(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	require.NoError(t, db.Ping(context.Background()))
}

func sortByID(list []*cairn.Workspace) {
	for i := range list {
		for j := i + 1; j < len(list); j++ {
			if list[j].ID < list[i].ID {
				list[i], list[j] = list[j], list[i]
			}
		}
	}
}

func ids(list []*cairn.Workspace) []string {
	out := make([]string, len(list))
	for i, ws := range list {
		out[i] = ws.ID
	}
	return out
}

func names(list []*cairn.Workspace) []string {
	out := make([]string, len(list))
	for i, ws := range list {
		out[i] = ws.Name
	}
	return out
}
