package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/service"
)

const shellColumns = `id, workspace_id, container, key, token_name, client_addr, instance, record, state,
	created_at, expires_at`

func scanShell(row pgx.Row) (*service.ShellRow, error) {
	var s service.ShellRow
	err := row.Scan(&s.ID, &s.WorkspaceID, &s.Container, &s.Key, &s.TokenName, &s.ClientAddr, &s.Instance,
		&s.Record, &s.State, &s.CreatedAt, &s.ExpiresAt)
	if err != nil {
		return nil, err
	}
	s.CreatedAt, s.ExpiresAt = cairn.Timestamp(s.CreatedAt), cairn.Timestamp(s.ExpiresAt)
	return &s, nil
}

// InsertShell inserts row as given, its times at the stored precision. A
// workspace deleted since the caller's checks is workspace_not_found.
func (db *DB) InsertShell(ctx context.Context, row *service.ShellRow) error {
	_, err := db.q.Exec(ctx, `INSERT INTO shells (id, workspace_id, container, key, token_name,
		client_addr, instance, record, state, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		row.ID, row.WorkspaceID, row.Container, row.Key, row.TokenName, row.ClientAddr, row.Instance,
		row.Record, string(row.State), cairn.Timestamp(row.CreatedAt), cairn.Timestamp(row.ExpiresAt))
	if isForeignKeyViolation(err) {
		return &cairn.Error{Reason: cairn.ReasonWorkspaceNotFound,
			Detail: "workspace '" + row.WorkspaceID + "' does not exist", Err: err}
	}
	if err != nil {
		return internal("insert shell", err)
	}
	return nil
}

// FindShell reads one registry row.
func (db *DB) FindShell(ctx context.Context, id string) (*service.ShellRow, error) {
	s, err := scanShell(db.q.QueryRow(ctx, `SELECT `+shellColumns+` FROM shells WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, cairn.ErrShellNotFound(id)
	}
	if err != nil {
		return nil, internal("find shell", err)
	}
	return s, nil
}

// FindShellEnd reads the reason and exit code of the shell's SHELL_CLOSED
// audit row (indexed by the shell's ID); nil when there is none.
func (db *DB) FindShellEnd(ctx context.Context, id string) (*service.ShellEnd, error) {
	var (
		reason string
		code   int
	)
	err := db.q.QueryRow(ctx, `SELECT coalesce(metadata ->> 'reason', ''), coalesce((metadata ->> 'exit_code')::int, -1)
		FROM audit_system_events WHERE type = $1 AND metadata ->> 'shell_id' = $2 LIMIT 1`,
		string(cairn.AuditShellClosed), id).Scan(&reason, &code)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("find a shell's end", err)
	}
	return &service.ShellEnd{Reason: ptyshell.Reason(reason), ExitCode: code}, nil
}

// FindShellRows lists the registry in (created_at, id) order, of one
// workspace when workspaceID is set. The two cases are two statements so
// each keeps its own index whatever plan the server caches.
func (db *DB) FindShellRows(ctx context.Context, workspaceID string) ([]*service.ShellRow, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if workspaceID == "" {
		rows, err = db.q.Query(ctx, `SELECT `+shellColumns+` FROM shells
			ORDER BY created_at, id LIMIT $1`, service.MaxShellRows)
	} else {
		rows, err = db.q.Query(ctx, `SELECT `+shellColumns+` FROM shells WHERE workspace_id = $1
			ORDER BY created_at, id LIMIT $2`, workspaceID, service.MaxShellRows)
	}
	if err != nil {
		return nil, internal("list shells", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*service.ShellRow, error) {
		return scanShell(row)
	})
	if err != nil {
		return nil, internal("list shells", err)
	}
	return list, nil
}

// CountShells counts instance's rows, all of them and those of workspaceID,
// in one scan of the instance's rows.
func (db *DB) CountShells(ctx context.Context, instance, workspaceID string) (total, inWorkspace int, err error) {
	err = db.q.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE workspace_id = $2)
		FROM shells WHERE instance = $1`, instance, workspaceID).Scan(&total, &inWorkspace)
	if err != nil {
		return 0, 0, internal("count shells", err)
	}
	return total, inWorkspace, nil
}

// SetShellState moves a row from one of the states in from to state in one
// statement: a second replica's UPDATE waits for the first's row lock, then
// finds the row no longer in from, so only one of them moves it.
func (db *DB) SetShellState(ctx context.Context, id string, from []service.ShellState,
	state service.ShellState) (bool, error) {
	states := make([]string, len(from))
	for i, s := range from {
		states[i] = string(s)
	}
	tag, err := db.q.Exec(ctx, `UPDATE shells SET state = $3 WHERE id = $1 AND state = ANY($2)`,
		id, states, string(state))
	if err != nil {
		return false, internal("set shell state", err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteShell deletes one registry row; an absent one is no error, so a
// replica ending a shell another replica already removed succeeds.
func (db *DB) DeleteShell(ctx context.Context, id string) error {
	if _, err := db.q.Exec(ctx, `DELETE FROM shells WHERE id = $1`, id); err != nil {
		return internal("delete shell", err)
	}
	return nil
}

// isForeignKeyViolation reports a foreign-key failure.
func isForeignKeyViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23503"
}
