package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/reconcile"
)

var _ reconcile.Store = (*DB)(nil)

// maintainerActor is the audit actor of the reconciler's writes.
const maintainerActor = "maintainer"

// LockPass takes the pass lock of app on a dedicated connection, waiting
// until ctx is done.
func (db *DB) LockPass(ctx context.Context, app string) (func(), error) {
	conn, err := db.held.Acquire(ctx)
	if err != nil {
		return nil, sweepBusyOr(ctx, "acquire pass lock connection", err)
	}
	key := lockKey("cairn.pass:" + app)
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", key); err != nil {
		discard(ctx, conn)
		return nil, sweepBusyOr(ctx, "take pass lock", err)
	}
	return func() { unlockAndRelease(ctx, conn, unlockExclusive, key) }, nil
}

func sweepBusyOr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return &cairn.Error{Reason: cairn.ReasonSweepBusy,
			Detail: "another reconciliation pass is running; try again later", Err: err}
	}
	return internal(what, err)
}

// lease is a held leader lock on its own connection.
type lease struct {
	conn *pgxpool.Conn
	key  int64
}

// TryLeader tries the leader lock of app on a dedicated connection, which
// the lease keeps until Release.
func (db *DB) TryLeader(ctx context.Context, app string) (reconcile.Lease, bool, error) {
	conn, err := db.held.Acquire(ctx)
	if err != nil {
		return nil, false, internal("acquire leader connection", err)
	}
	key := lockKey("cairn.leader:" + app)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		discard(ctx, conn)
		return nil, false, internal("try leader lock", err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return &lease{conn: conn, key: key}, true, nil
}

// Alive pings the lease's session.
func (l *lease) Alive(ctx context.Context) error {
	if err := l.conn.Ping(ctx); err != nil {
		return internal("ping leader session", err)
	}
	return nil
}

// Release unlocks explicitly rather than closing the session (see
// unlockAndRelease).
func (l *lease) Release() { unlockAndRelease(context.Background(), l.conn, unlockExclusive, l.key) }

// WorkspacePage lists workspaces after the cursor in (created_at, id) order.
func (db *DB) WorkspacePage(ctx context.Context, after *cairn.Workspace, limit int) ([]*cairn.Workspace, error) {
	var afterAt time.Time
	var afterID *string
	if after != nil {
		afterAt, afterID = after.CreatedAt, &after.ID
	}
	rows, err := db.q.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE $2::text IS NULL OR (coalesce(created_at, to_timestamp(0)), id) > ($1, $2)
		ORDER BY coalesce(created_at, to_timestamp(0)), id LIMIT $3`, afterAt, afterID, limit)
	if err != nil {
		return nil, internal("page workspaces", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Workspace, error) {
		return scanWorkspace(row)
	})
	if err != nil {
		return nil, internal("page workspaces", err)
	}
	return list, nil
}

// ObjectRefs looks listed keys up in artifacts and released_objects.
func (db *DB) ObjectRefs(ctx context.Context, keys []string) (map[string]bool, map[string]time.Time, error) {
	referenced := make(map[string]bool)
	released := make(map[string]time.Time)
	rows, err := db.q.Query(ctx, `SELECT DISTINCT object_key FROM artifacts WHERE object_key = ANY($1)`, keys)
	if err != nil {
		return nil, nil, internal("look up artifact keys", err)
	}
	var key string
	if _, err := pgx.ForEachRow(rows, []any{&key}, func() error { referenced[key] = true; return nil }); err != nil {
		return nil, nil, internal("look up artifact keys", err)
	}
	rows, err = db.q.Query(ctx, `SELECT object_key, released_at FROM released_objects WHERE object_key = ANY($1)`, keys)
	if err != nil {
		return nil, nil, internal("look up released keys", err)
	}
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&key, &at}, func() error { released[key] = at; return nil }); err != nil {
		return nil, nil, internal("look up released keys", err)
	}
	return referenced, released, nil
}

// DeleteReleased deletes the released rows of keys.
func (db *DB) DeleteReleased(ctx context.Context, keys []string) error {
	if _, err := db.q.Exec(ctx, `DELETE FROM released_objects WHERE object_key = ANY($1)`, keys); err != nil {
		return internal("delete released keys", err)
	}
	return nil
}

// PruneReleased deletes released rows older than cutoff.
func (db *DB) PruneReleased(ctx context.Context, cutoff time.Time, workspaceID string) (int, error) {
	tag, err := db.q.Exec(ctx, `DELETE FROM released_objects
		WHERE released_at < $1 AND ($2 = '' OR workspace_id = $2)`, cutoff, workspaceID)
	if err != nil {
		return 0, internal("prune released keys", err)
	}
	return int(tag.RowsAffected()), nil
}

// FlagMissing sets MISSING_OBJECT on a still-RECORDED row whose key is
// unchanged, with its audit row, in one transaction.
func (db *DB) FlagMissing(ctx context.Context, a *cairn.Artifact, at time.Time) (bool, error) {
	flagged := false
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var workspaceID, name string
		err := tx.QueryRow(ctx, `UPDATE artifacts SET state = $3, updated_at = $4
			WHERE id = $1 AND object_key = $2 AND state = $5 RETURNING workspace_id, name`,
			a.ID, a.ObjectKey, cairn.ArtifactMissingObject, at, cairn.ArtifactRecorded).Scan(&workspaceID, &name)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `INSERT INTO audit_system_events
			(id, type, metadata, actor, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
			ulid.Make().String(), cairn.AuditArtifactMissing, map[string]any{
				"workspace_id": workspaceID, "artifact_id": a.ID, "artifact_name": name, "object_key": a.ObjectKey,
			}, maintainerActor, at)
		flagged = err == nil
		return err
	})
	if err != nil {
		return false, internal("flag missing object", err)
	}
	return flagged, nil
}

// keySet is a temporary table of listed keys on a dedicated connection.
type keySet struct {
	conn *pgxpool.Conn
}

// OpenKeySet creates the session's temporary key table.
func (db *DB) OpenKeySet(ctx context.Context) (reconcile.KeySet, error) {
	conn, err := db.held.Acquire(ctx)
	if err != nil {
		return nil, internal("acquire listing connection", err)
	}
	_, err = conn.Exec(ctx, `DROP TABLE IF EXISTS pg_temp.listed_keys`)
	if err == nil {
		_, err = conn.Exec(ctx, `CREATE TEMP TABLE listed_keys (object_key text PRIMARY KEY)`)
	}
	if err != nil {
		discard(ctx, conn)
		return nil, internal("create listing table", err)
	}
	return &keySet{conn: conn}, nil
}

// Add copies keys into the table.
func (k *keySet) Add(ctx context.Context, keys []string) error {
	if _, err := k.conn.Exec(ctx, `INSERT INTO listed_keys SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`,
		keys); err != nil {
		return internal("record listed keys", err)
	}
	return nil
}

// Missing anti-joins RECORDED rows against the listed keys.
func (k *keySet) Missing(ctx context.Context, prefix, workspaceID string, cutoff time.Time,
	afterID string, limit int) ([]*cairn.Artifact, error) {
	rows, err := k.conn.Query(ctx, `SELECT `+artifactColumns+` FROM artifacts a
		WHERE a.state = $1 AND a.content_written_at < $2 AND starts_with(a.object_key, $3)
		  AND ($4 = '' OR a.workspace_id = $4) AND a.id > $5
		  AND NOT EXISTS (SELECT 1 FROM listed_keys l WHERE l.object_key = a.object_key)
		ORDER BY a.id LIMIT $6`, cairn.ArtifactRecorded, cutoff, prefix, workspaceID, afterID, limit)
	if err != nil {
		return nil, internal("find missing objects", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Artifact, error) {
		return scanArtifact(row)
	})
	if err != nil {
		return nil, internal("find missing objects", err)
	}
	return list, nil
}

// Close drops the table with the session: the connection goes back closed,
// so no temporary table outlives the listing.
func (k *keySet) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := k.conn.Exec(ctx, `DROP TABLE IF EXISTS pg_temp.listed_keys`); err != nil {
		k.conn.Conn().Close(ctx) //nolint:errcheck // the session's end drops the table
	}
	k.conn.Release()
}
