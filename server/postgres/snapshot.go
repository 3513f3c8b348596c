package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.SnapshotStore = (*DB)(nil)

const snapshotColumns = `id, workspace_id, name, live, entries, bytes, uploaded_bytes, skipped,
	manifest_sha256, created_by, created_at`

func scanSnapshot(row pgx.Row, extra ...any) (*cairn.Snapshot, error) {
	var s cairn.Snapshot
	dest := append([]any{&s.ID, &s.WorkspaceID, &s.Name, &s.Live, &s.Entries, &s.Bytes, &s.UploadedBytes,
		&s.Skipped, &s.ManifestSHA256, &s.CreatedBy, &s.CreatedAt}, extra...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	return &s, nil
}

// PendSnapshotObject records an object a run is about to be granted.
func (db *DB) PendSnapshotObject(ctx context.Context, key string, size int64) error {
	if _, err := db.q.Exec(ctx, `INSERT INTO snapshot_objects (key, size, state) VALUES ($1, $2, 'PENDING')`,
		key, size); err != nil {
		return internal("record a snapshot object", err)
	}
	return nil
}

// PresentContent answers which digests have content, marking it used.
func (db *DB) PresentContent(ctx context.Context, digests []string) (map[string]bool, error) {
	rows, err := db.q.Query(ctx, `UPDATE snapshot_content SET used_at = now() WHERE digest = ANY($1) RETURNING digest`, digests)
	if err != nil {
		return nil, internal("look up snapshot content", err)
	}
	present := map[string]bool{}
	var d string
	if _, err := pgx.ForEachRow(rows, []any{&d}, func() error { present[d] = true; return nil }); err != nil {
		return nil, internal("look up snapshot content", err)
	}
	return present, nil
}

// LocateContent answers where each digest's content is, marking it used.
func (db *DB) LocateContent(ctx context.Context, digests []string) (map[string]service.ContentLocation, error) {
	rows, err := db.q.Query(ctx, `UPDATE snapshot_content SET used_at = now() WHERE digest = ANY($1)
		RETURNING digest, object_key, offset_bytes, size, bundled`, digests)
	if err != nil {
		return nil, internal("locate snapshot content", err)
	}
	out := map[string]service.ContentLocation{}
	var d string
	var l service.ContentLocation
	if _, err := pgx.ForEachRow(rows, []any{&d, &l.ObjectKey, &l.Offset, &l.Size, &l.Bundled}, func() error {
		out[d] = l
		return nil
	}); err != nil {
		return nil, internal("locate snapshot content", err)
	}
	return out, nil
}

// CommitSnapshot records a finished run in one transaction. Content
// another run stored meanwhile under the same digest wins: this run's copy
// is then named by nothing and reaped.
func (db *DB) CommitSnapshot(ctx context.Context, snap *cairn.Snapshot, c service.SnapshotCommit, audit *cairn.AuditEvent) error {
	return db.WithTx(ctx, func(st service.Store) error {
		tx := st.(*DB).q
		// The workspace row lock orders commits of one workspace, so the
		// count below holds.
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM snapshots WHERE workspace_id =
			(SELECT id FROM workspaces WHERE id = $1 FOR UPDATE)`, snap.WorkspaceID).Scan(&n); err != nil {
			return internal("count snapshots", err)
		}
		if n >= cairn.MaxSnapshotsPerWorkspace {
			return cairn.Errorf(cairn.ReasonTooManySnapshots,
				"workspace %s holds %d snapshots, the most it may; delete one first", snap.WorkspaceID, n)
		}
		tag, err := tx.Exec(ctx, `UPDATE snapshot_objects SET state = 'STORED' WHERE key = ANY($1) AND state = 'PENDING'`, c.Objects)
		if err != nil {
			return internal("record snapshot objects", err)
		}
		if tag.RowsAffected() != int64(len(c.Objects)) {
			return cairn.Errorf(cairn.ReasonSidecarTimeout,
				"the snapshot ran past the reaper's grace for its uploads, which are gone; take it again")
		}
		if err := insertContent(ctx, tx, c.Content); err != nil {
			return err
		}
		if err := insertSnapshot(ctx, tx, snap, c); err != nil {
			return err
		}
		return st.InsertAudit(ctx, audit)
	})
}

// insertContent records the content a run uploaded, in one statement.
func insertContent(ctx context.Context, tx querier, content map[string]service.ContentLocation) error {
	n := len(content)
	digests, keys := make([]string, 0, n), make([]string, 0, n)
	offsets, sizes := make([]int64, 0, n), make([]int64, 0, n)
	bundled := make([]bool, 0, n)
	for d, l := range content {
		digests, keys = append(digests, d), append(keys, l.ObjectKey)
		offsets, sizes, bundled = append(offsets, l.Offset), append(sizes, l.Size), append(bundled, l.Bundled)
	}
	_, err := tx.Exec(ctx, `INSERT INTO snapshot_content (digest, object_key, offset_bytes, size, bundled)
		SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::boolean[])
		ON CONFLICT (digest) DO UPDATE SET used_at = now()`, digests, keys, offsets, sizes, bundled)
	if err != nil {
		return internal("record snapshot content", err)
	}
	return nil
}

// insertSnapshot inserts the row and its references.
func insertSnapshot(ctx context.Context, tx querier, snap *cairn.Snapshot, c service.SnapshotCommit) error {
	_, err := tx.Exec(ctx, `INSERT INTO snapshots (id, workspace_id, name, live, manifest_key, manifest_sha256,
		entries, bytes, uploaded_bytes, skipped, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		snap.ID, snap.WorkspaceID, snap.Name, snap.Live, c.ManifestKey, snap.ManifestSHA256, snap.Entries, snap.Bytes,
		snap.UploadedBytes, snap.Skipped, snap.CreatedBy, snap.CreatedAt)
	if isUniqueViolation(err) {
		return cairn.Errorf(cairn.ReasonNameTaken, "workspace %s already has a snapshot named '%s'", snap.WorkspaceID, snap.Name)
	}
	if err != nil {
		return internal("insert snapshot", err)
	}
	var refs int64
	err = tx.QueryRow(ctx, `WITH r AS (INSERT INTO snapshot_refs (snapshot_id, digest)
		SELECT $1, d FROM unnest($2::text[]) AS d WHERE d IN (SELECT digest FROM snapshot_content)
		ON CONFLICT DO NOTHING RETURNING 1) SELECT count(*) FROM r`, snap.ID, c.Refs).Scan(&refs)
	if err != nil {
		return internal("insert snapshot references", err)
	}
	if refs != int64(len(c.Refs)) {
		return cairn.Errorf(cairn.ReasonSnapshotCorrupt,
			"the snapshot names %d digests but only %d have content in the store", len(c.Refs), refs)
	}
	return nil
}

// DropSnapshotObjects forgets PENDING objects.
func (db *DB) DropSnapshotObjects(ctx context.Context, keys []string) error {
	if _, err := db.q.Exec(ctx, `DELETE FROM snapshot_objects o WHERE key = ANY($1)
		AND NOT EXISTS (SELECT 1 FROM snapshot_content c WHERE c.object_key = o.key)
		AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.manifest_key = o.key)`, keys); err != nil {
		return internal("forget snapshot objects", err)
	}
	return nil
}

// FindSnapshot reads one snapshot with its manifest's key.
func (db *DB) FindSnapshot(ctx context.Context, id string) (*service.SnapshotRow, error) {
	var key string
	s, err := scanSnapshot(db.q.QueryRow(ctx, `SELECT `+snapshotColumns+`, manifest_key FROM snapshots WHERE id = $1`, id), &key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, cairn.Errorf(cairn.ReasonSnapshotNotFound, "snapshot '%s' does not exist", id)
	}
	if err != nil {
		return nil, internal("find snapshot", err)
	}
	return &service.SnapshotRow{Snapshot: *s, ManifestKey: key}, nil
}

// LatestSnapshot reads the workspace's newest snapshot, nil when none.
func (db *DB) LatestSnapshot(ctx context.Context, workspaceID string) (*service.SnapshotRow, error) {
	var key string
	s, err := scanSnapshot(db.q.QueryRow(ctx, `SELECT `+snapshotColumns+`, manifest_key FROM snapshots
		WHERE workspace_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`, workspaceID), &key)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find the latest snapshot", err)
	}
	return &service.SnapshotRow{Snapshot: *s, ManifestKey: key}, nil
}

// FindSnapshots lists a workspace's snapshots in (created_at, id) order.
func (db *DB) FindSnapshots(ctx context.Context, workspaceID string) ([]*cairn.Snapshot, error) {
	return db.snapshots(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE workspace_id = $1 ORDER BY created_at, id`, workspaceID)
}

// SnapshotsByID reads the snapshots of ids that exist.
func (db *DB) SnapshotsByID(ctx context.Context, ids []string) ([]*cairn.Snapshot, error) {
	return db.snapshots(ctx, `SELECT `+snapshotColumns+` FROM snapshots WHERE id = ANY($1)`, ids)
}

func (db *DB) snapshots(ctx context.Context, query string, arg any) ([]*cairn.Snapshot, error) {
	rows, err := db.q.Query(ctx, query, arg)
	if err != nil {
		return nil, internal("list snapshots", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Snapshot, error) { return scanSnapshot(row) })
	if err != nil {
		return nil, internal("list snapshots", err)
	}
	return list, nil
}

// DeleteSnapshot deletes one snapshot and records the audit event; its
// references cascade, its manifest object is left to the reaper.
func (db *DB) DeleteSnapshot(ctx context.Context, id string, audit *cairn.AuditEvent) error {
	return db.WithTx(ctx, func(st service.Store) error {
		tag, err := st.(*DB).q.Exec(ctx, `DELETE FROM snapshots WHERE id = $1`, id)
		if isForeignKeyViolation(err) {
			return cairn.Errorf(cairn.ReasonSnapshotInUse,
				"snapshot '%s' holds an archived workspace's volume; set that workspace's volume up first", id)
		}
		if err != nil {
			return internal("delete snapshot", err)
		}
		if tag.RowsAffected() == 0 {
			return cairn.Errorf(cairn.ReasonSnapshotNotFound, "snapshot '%s' does not exist", id)
		}
		return st.InsertAudit(ctx, audit)
	})
}

// ReapSnapshotContent deletes unreferenced content last used before cutoff.
func (db *DB) ReapSnapshotContent(ctx context.Context, cutoff time.Time) (int, error) {
	tag, err := db.q.Exec(ctx, `DELETE FROM snapshot_content c WHERE used_at < $1
		AND NOT EXISTS (SELECT 1 FROM snapshot_refs r WHERE r.digest = c.digest)`, cutoff)
	if err != nil {
		return 0, internal("reap snapshot content", err)
	}
	return int(tag.RowsAffected()), nil
}

// ClaimDoomedSnapshotObjects deletes and returns the rows of up to limit
// objects the reaper may delete. The row goes first, so a late commit of
// a PENDING one fails rather than naming an object about to go.
func (db *DB) ClaimDoomedSnapshotObjects(ctx context.Context, cutoff, pendingCutoff time.Time, limit int) ([]string, error) {
	rows, err := db.q.Query(ctx, `DELETE FROM snapshot_objects WHERE key IN (SELECT key FROM snapshot_objects o
		WHERE (state = 'PENDING' AND created_at < $2)
		   OR (state = 'STORED' AND created_at < $1
		       AND NOT EXISTS (SELECT 1 FROM snapshot_content c WHERE c.object_key = o.key)
		       AND NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.manifest_key = o.key))
		ORDER BY key LIMIT $3 FOR UPDATE SKIP LOCKED) RETURNING key`, cutoff, pendingCutoff, limit)
	if err != nil {
		return nil, internal("claim doomed snapshot objects", err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, internal("claim doomed snapshot objects", err)
	}
	return keys, nil
}
