package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

const execColumns = `id, workspace_id, container, token_name, client_addr, instance, process, argv0, started, created_at`

// InsertExec inserts row, not started, created now by the database's
// clock. A workspace deleted since the caller's checks is
// workspace_not_found.
func (db *DB) InsertExec(ctx context.Context, row *service.ExecRow) error {
	_, err := db.q.Exec(ctx, `INSERT INTO execs (id, workspace_id, container, token_name, client_addr, instance,
		process, argv0) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		row.ID, row.WorkspaceID, row.Container, row.TokenName, row.ClientAddr, row.Instance, row.Process, row.Argv0)
	if isForeignKeyViolation(err) {
		return &cairn.Error{Reason: cairn.ReasonWorkspaceNotFound,
			Detail: "workspace '" + row.WorkspaceID + "' does not exist", Err: err}
	}
	if err != nil {
		return internal("insert exec", err)
	}
	return nil
}

// SetExecStarted marks one row started.
func (db *DB) SetExecStarted(ctx context.Context, id string) error {
	if _, err := db.q.Exec(ctx, `UPDATE execs SET started = true WHERE id = $1`, id); err != nil {
		return internal("mark exec started", err)
	}
	return nil
}

// DeleteExec deletes one row: the replica whose DELETE removed it is the
// one that records its end.
func (db *DB) DeleteExec(ctx context.Context, id string) (bool, error) {
	tag, err := db.q.Exec(ctx, `DELETE FROM execs WHERE id = $1`, id)
	if err != nil {
		return false, internal("delete exec", err)
	}
	return tag.RowsAffected() == 1, nil
}

// FindExecRows lists instance's rows in (created_at, id) order.
func (db *DB) FindExecRows(ctx context.Context, instance string) ([]*service.ExecRow, error) {
	return db.execRows(ctx, "list execs", `SELECT `+execColumns+` FROM execs WHERE instance = $1
		ORDER BY created_at, id LIMIT $2`, instance, service.MaxShellRows)
}

// LostExecRows lists the rows older than minAge whose instance has no
// live row in instances, by the database's clock.
func (db *DB) LostExecRows(ctx context.Context, minAge time.Duration) ([]*service.ExecRow, error) {
	return db.execRows(ctx, "list lost execs", `SELECT `+execColumns+` FROM execs e
		WHERE e.created_at < now() - make_interval(secs => $1)
		  AND NOT EXISTS (SELECT 1 FROM instances i WHERE i.name = e.instance AND i.renew_by > now())
		ORDER BY created_at, id LIMIT $2`, minAge.Seconds(), service.MaxShellRows)
}

// RenewInstance pushes instance's renew_by to ttl from now, by the
// database's clock, so servers with skewed clocks agree on who is live.
func (db *DB) RenewInstance(ctx context.Context, instance string, ttl time.Duration) error {
	_, err := db.q.Exec(ctx, `INSERT INTO instances (name, renew_by) VALUES ($1, now() + make_interval(secs => $2))
		ON CONFLICT (name) DO UPDATE SET renew_by = EXCLUDED.renew_by`, instance, ttl.Seconds())
	if err != nil {
		return internal("renew instance", err)
	}
	return nil
}

func (db *DB) execRows(ctx context.Context, what, sql string, args ...any) ([]*service.ExecRow, error) {
	rows, err := db.q.Query(ctx, sql, args...)
	if err != nil {
		return nil, internal(what, err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*service.ExecRow, error) {
		var e service.ExecRow
		if err := row.Scan(&e.ID, &e.WorkspaceID, &e.Container, &e.TokenName, &e.ClientAddr, &e.Instance,
			&e.Process, &e.Argv0, &e.Started, &e.CreatedAt); err != nil {
			return nil, err
		}
		e.CreatedAt = cairn.Timestamp(e.CreatedAt)
		return &e, nil
	})
	if err != nil {
		return nil, internal(what, err)
	}
	return list, nil
}
