package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.LifecycleStore = (*DB)(nil)

// ExpiryCandidates lists up to limit workspaces whose expiry is at or
// before horizon, soonest first.
func (db *DB) ExpiryCandidates(ctx context.Context, horizon time.Time, limit int) ([]*cairn.Workspace, error) {
	return db.lifecycleRows(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE expires_at <= $1 ORDER BY expires_at, id LIMIT $2`, horizon, limit)
}

// ArchiveCandidates lists up to limit READY workspaces whose idle bound —
// their own, else defaultIdleSecs — is set, least recently active first.
func (db *DB) ArchiveCandidates(ctx context.Context, defaultIdleSecs int64, limit int) ([]*cairn.Workspace, error) {
	return db.lifecycleRows(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE volume_state = 'READY' AND archived_snapshot_id IS NULL
		  AND coalesce(archive_idle_after_secs, $1) > 0
		ORDER BY last_active_at, id LIMIT $2`, defaultIdleSecs, limit)
}

func (db *DB) lifecycleRows(ctx context.Context, query string, args ...any) ([]*cairn.Workspace, error) {
	rows, err := db.q.Query(ctx, query, args...)
	if err != nil {
		return nil, internal("list lifecycle candidates", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Workspace, error) { return scanWorkspace(row) })
	if err != nil {
		return nil, internal("list lifecycle candidates", err)
	}
	return list, nil
}

// Warn records, for each workspace of ids not warned yet of op (EXPIRING
// or ARCHIVING), that its warning went out at the given time, and sends it:
// to the webhook outbox and the events channel, in the same transaction.
// It returns the workspaces it warned, with the audit event of each.
func (db *DB) Warn(ctx context.Context, op string, ids []string, at time.Time, audit func(id string) *cairn.AuditEvent) ([]string, error) {
	column := "expiry_warned_at"
	if op == service.OpArchiving {
		column = "archive_warned_at"
	}
	var warned []string
	err := db.WithTx(ctx, func(st service.Store) error {
		tx := st.(*DB).q
		rows, err := tx.Query(ctx, `UPDATE workspaces SET `+column+` = $2 WHERE id = ANY($1) AND `+column+` IS NULL RETURNING id`, ids, at)
		if err != nil {
			return internal("record lifecycle warnings", err)
		}
		if warned, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			return internal("record lifecycle warnings", err)
		}
		for _, id := range warned {
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_outbox (kind, op, id, workspace_id) VALUES ('workspace', $1, $2, $2)`,
				op, id); err != nil {
				return internal("send a lifecycle warning", err)
			}
			if _, err := tx.Exec(ctx, `SELECT pg_notify('cairn_events', json_build_object(
				'kind', 'workspace', 'op', $1::text, 'id', $2::text, 'workspace_id', $2::text)::text)`, op, id); err != nil {
				return internal("send a lifecycle warning", err)
			}
			if err := st.InsertAudit(ctx, audit(id)); err != nil {
				return err
			}
		}
		return nil
	})
	return warned, err
}

// MarkActive records activity of the workspaces at the given time, which
// withdraws an archiving warning. A row marked within the last minute and
// not warned is left alone, so a burst of file writes is one row write.
func (db *DB) MarkActive(ctx context.Context, ids []string, at time.Time) error {
	if _, err := db.q.Exec(ctx, `UPDATE workspaces SET last_active_at = $2, archive_warned_at = NULL
		WHERE id = ANY($1) AND (last_active_at < $2::timestamptz - interval '1 minute' OR archive_warned_at IS NOT NULL)`, ids, at); err != nil {
		return internal("record workspace activity", err)
	}
	return nil
}
