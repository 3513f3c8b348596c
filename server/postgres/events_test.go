package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/migrations"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service"
)

// counts reads a workspace's kept counts.
func counts(t *testing.T, db *postgres.DB, id string) cairn.ArtifactCounts {
	t.Helper()
	ws, err := db.FindWorkspace(context.Background(), id)
	require.NoError(t, err)
	return ws.ArtifactCounts
}

// scanned counts a workspace's artifacts by state the slow way, to check
// the kept counts against.
func scanned(t *testing.T, dsn, id string) cairn.ArtifactCounts {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var c cairn.ArtifactCounts
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FILTER (WHERE state = 'RECORDED'),
		count(*) FILTER (WHERE state = 'MISSING_OBJECT') FROM artifacts WHERE workspace_id = $1`, id).
		Scan(&c.Recorded, &c.MissingObject))
	return c
}

func TestArtifactCountsFollowEveryChange(t *testing.T) {
	t.Parallel()
	db, ws, dsn := setupWorkspace(t)
	ctx := context.Background()
	require.Equal(t, cairn.ArtifactCounts{}, counts(t, db, ws.ID), "a new workspace counts nothing")

	a, b := newArtifact(ws, "a", cairn.Now()), newArtifact(ws, "b", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))
	require.NoError(t, db.InsertArtifact(ctx, b))
	require.Equal(t, cairn.ArtifactCounts{Recorded: 2}, counts(t, db, ws.ID))

	flagged, err := db.FlagMissing(ctx, a, cairn.Now())
	require.NoError(t, err)
	require.True(t, flagged)
	require.Equal(t, cairn.ArtifactCounts{Recorded: 1, MissingObject: 1}, counts(t, db, ws.ID))

	a.State, a.Name = cairn.ArtifactMissingObject, "renamed"
	require.NoError(t, db.UpdateArtifact(ctx, a))
	require.Equal(t, cairn.ArtifactCounts{Recorded: 1, MissingObject: 1}, counts(t, db, ws.ID), "a rename moves no count")

	a.State = cairn.ArtifactRecorded
	require.NoError(t, db.UpdateArtifact(ctx, a))
	require.Equal(t, cairn.ArtifactCounts{Recorded: 2}, counts(t, db, ws.ID), "a content replacement repairs the count")

	require.NoError(t, db.DeleteArtifact(ctx, b.ID))
	require.Equal(t, cairn.ArtifactCounts{Recorded: 1}, counts(t, db, ws.ID))

	t.Run("RolledBack", func(t *testing.T) {
		err := db.WithTx(ctx, func(st service.Store) error {
			require.NoError(t, st.InsertArtifact(ctx, newArtifact(ws, "gone", cairn.Now())))
			return fmt.Errorf("roll back")
		})
		require.Error(t, err)
		require.Equal(t, cairn.ArtifactCounts{Recorded: 1}, counts(t, db, ws.ID))
	})
	t.Run("ManyRowsInOneStatement", func(t *testing.T) {
		other := newWorkspace("other", cairn.Now())
		require.NoError(t, db.InsertWorkspace(ctx, other))
		conn, err := pgx.Connect(ctx, dsn)
		require.NoError(t, err)
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, state,
			content_written_at, created_at, updated_at)
			SELECT 'bulk' || i || w, w, 'bulk' || i, 'store/' || w || '/' || i, 'text/plain', 1,
			       CASE WHEN i % 3 = 0 THEN 'MISSING_OBJECT' ELSE 'RECORDED' END, now(), now(), now()
			  FROM generate_series(1, 30) i, unnest($1::text[]) w`, []string{ws.ID, other.ID})
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactCounts{Recorded: 21, MissingObject: 10}, counts(t, db, ws.ID))
		require.Equal(t, cairn.ArtifactCounts{Recorded: 20, MissingObject: 10}, counts(t, db, other.ID))

		_, err = conn.Exec(ctx, `UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE name LIKE 'bulk%'`)
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactCounts{Recorded: 1, MissingObject: 30}, counts(t, db, ws.ID))
		require.Equal(t, cairn.ArtifactCounts{MissingObject: 30}, counts(t, db, other.ID))

		_, err = conn.Exec(ctx, `DELETE FROM artifacts WHERE name LIKE 'bulk%' AND workspace_id = $1`, ws.ID)
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactCounts{Recorded: 1}, counts(t, db, ws.ID))
		require.NoError(t, db.DeleteWorkspace(ctx, other.ID, cairn.Now()), "a cascade has no workspace to count in")
	})
	require.Equal(t, scanned(t, dsn, ws.ID), counts(t, db, ws.ID))
}

// TestArtifactCountsUnderConcurrency runs registers, deletes and maintainer
// flags in one workspace from 20 goroutines, each through the store calls
// the service and the reconciler make, and checks the kept counts against a
// scan.
func TestArtifactCountsUnderConcurrency(t *testing.T) {
	t.Parallel()
	db, ws, dsn := setupWorkspace(t)
	ctx := context.Background()
	seed := make([]*cairn.Artifact, 60)
	for i := range seed {
		seed[i] = newArtifact(ws, fmt.Sprintf("seed-%d", i), cairn.Now())
		require.NoError(t, db.InsertArtifact(ctx, seed[i]))
	}
	register := func(g, i int) error {
		return db.WithTx(ctx, func(st service.Store) error {
			return st.InsertArtifact(ctx, newArtifact(ws, fmt.Sprintf("new-%d-%d", g, i), cairn.Now()))
		})
	}
	remove := func(a *cairn.Artifact) error {
		return db.WithTx(ctx, func(st service.Store) error {
			if _, err := st.LockArtifactRow(ctx, a.ID); err != nil {
				return err
			}
			if err := st.DeleteArtifact(ctx, a.ID); err != nil {
				return err
			}
			return st.ReleaseObject(ctx, a.ObjectKey, a.WorkspaceID, cairn.Now())
		})
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20*10)
	for g := range 20 {
		wg.Go(func() {
			for i := range 10 {
				var err error
				switch g % 3 {
				case 0:
					err = register(g, i)
				case 1: // deleters share the first half of the seed rows, racing for some
					err = remove(seed[(g/3*5+i)%(len(seed)/2)])
					if cairn.ErrorReason(err) == cairn.ReasonArtifactNotFound {
						err = nil
					}
				case 2: // flaggers race each other and the deleters
					_, err = db.FlagMissing(ctx, seed[(g*7+i)%len(seed)], cairn.Now())
				}
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, want := counts(t, db, ws.ID), scanned(t, dsn, ws.ID)
	require.Equal(t, want, got)
	require.Positive(t, got.MissingObject, "some flags landed")
}

// listen subscribes a connection of ListenConn to cairn_events.
func listen(t *testing.T, db *postgres.DB) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := db.ListenConn(ctx, "cairn-events test")
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, `LISTEN cairn_events`)
	require.NoError(t, err)
	var name string
	require.NoError(t, conn.QueryRow(ctx, `SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()`).
		Scan(&name))
	require.Equal(t, "cairn-events test", name, "the session is named")
	return conn
}

// payloads reads the next n notifications.
func payloads(t *testing.T, conn *pgx.Conn, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got []string
	for range n {
		note, err := conn.WaitForNotification(ctx)
		require.NoError(t, err)
		require.Equal(t, "cairn_events", note.Channel)
		var p map[string]string
		require.NoError(t, json.Unmarshal([]byte(note.Payload), &p), note.Payload)
		require.Len(t, p, 4, note.Payload)
		got = append(got, p["kind"]+" "+p["op"]+" "+p["id"]+" "+p["workspace_id"])
	}
	return got
}

func TestChangeNotifications(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	conn := listen(t, db)
	ctx := context.Background()

	ws := newWorkspace("ws", cairn.Now())
	require.NoError(t, db.InsertWorkspace(ctx, ws))
	require.Equal(t, []string{"workspace INSERT " + ws.ID + " " + ws.ID}, payloads(t, conn, 1))

	a := newArtifact(ws, "a", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))
	require.Equal(t, []string{
		"artifact INSERT " + a.ID + " " + ws.ID,
		"workspace UPDATE " + ws.ID + " " + ws.ID, // its count moved
	}, payloads(t, conn, 2))

	a.Name = "renamed"
	require.NoError(t, db.UpdateArtifact(ctx, a))
	ws.Name = "ws2"
	require.NoError(t, db.UpdateWorkspace(ctx, ws))
	require.Equal(t, []string{
		"artifact UPDATE " + a.ID + " " + ws.ID, // no count moved: no workspace notification
		"workspace UPDATE " + ws.ID + " " + ws.ID,
	}, payloads(t, conn, 2))

	b := newArtifact(ws, "b", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, b))
	payloads(t, conn, 2)
	require.NoError(t, db.DeleteWorkspace(ctx, ws.ID, cairn.Now()))
	got := payloads(t, conn, 3)
	require.ElementsMatch(t, []string{
		"artifact DELETE " + a.ID + " " + ws.ID, // cascaded deletions notify too
		"artifact DELETE " + b.ID + " " + ws.ID,
		"workspace DELETE " + ws.ID + " " + ws.ID,
	}, got)
}

func TestRowsByID(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := context.Background()
	a := newArtifact(ws, "a", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))

	list, err := db.WorkspacesByID(ctx, []string{ws.ID, "00000000-0000-4000-8000-000000000000"})
	require.NoError(t, err)
	require.Len(t, list, 1, "unknown IDs are left out")
	require.Equal(t, ws.ID, list[0].ID)
	require.Equal(t, cairn.ArtifactCounts{Recorded: 1}, list[0].ArtifactCounts)

	arts, err := db.ArtifactsByID(ctx, []string{a.ID, ulid.Make().String()})
	require.NoError(t, err)
	require.Equal(t, []*cairn.Artifact{a}, arts)
}

// TestCountsBackfill upgrades a database holding artifacts to the events
// migration: the counts start right.
func TestCountsBackfill(t *testing.T) {
	t.Parallel()
	pg := stacktest.Postgres(t)
	ctx := context.Background()
	name := "backfill_" + strings.ToLower(ulid.Make().String())
	require.NoError(t, pg.CreateDatabase(ctx, name, ""))
	t.Cleanup(func() { require.NoError(t, pg.DropDatabase(context.Background(), name)) })

	conn, err := pgx.Connect(ctx, pg.DSN(name))
	require.NoError(t, err)
	defer conn.Close(ctx)
	m, err := migrate.NewMigrator(ctx, conn, "cairn_schema_version")
	require.NoError(t, err)
	require.NoError(t, m.LoadMigrations(migrations.FS))
	require.NoError(t, m.MigrateTo(ctx, 2))
	_, err = conn.Exec(ctx, `INSERT INTO workspaces (id, name, volume_name) VALUES ('w1', 'one', 'c-w1'), ('w2', 'two', 'c-w2');
		INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size, state, content_written_at)
		SELECT 'a' || i, 'w1', 'a' || i, 'k' || i, 'text/plain', 1,
		       CASE WHEN i <= 2 THEN 'MISSING_OBJECT' ELSE 'RECORDED' END, now()
		  FROM generate_series(1, 7) i`)
	require.NoError(t, err)
	require.NoError(t, m.Migrate(ctx))

	db, err := postgres.Open(ctx, pg.DSN(name))
	require.NoError(t, err)
	defer db.Close()
	require.Equal(t, cairn.ArtifactCounts{Recorded: 5, MissingObject: 2}, counts(t, db, "w1"))
	require.Equal(t, cairn.ArtifactCounts{}, counts(t, db, "w2"))
}
