package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
)

// workspaceColumns reads a workspace row; the artifact counts are columns
// kept by triggers (migrations/0003_events.sql), never a scan.
const workspaceColumns = `id, name, description, volume_name, volume_state, volume_metadata,
	volume_issue, volume_issue_detail, artifacts_recorded, artifacts_missing_object,
	coalesce(created_at, to_timestamp(0)), coalesce(updated_at, to_timestamp(0)),
	ttl_secs, expires_at, expiry_warned_at, archive_idle_after_secs, archive_warned_at, archived_snapshot_id, last_active_at`

func scanWorkspace(row pgx.Row) (*cairn.Workspace, error) {
	var ws cairn.Workspace
	var issue, issueDetail *string
	err := row.Scan(&ws.ID, &ws.Name, &ws.Description, &ws.VolumeName, &ws.VolumeState,
		&ws.VolumeMetadata, &issue, &issueDetail, &ws.ArtifactCounts.Recorded, &ws.ArtifactCounts.MissingObject,
		&ws.CreatedAt, &ws.UpdatedAt, &ws.TTLSecs, &ws.ExpiresAt, &ws.ExpiryWarnedAt, &ws.ArchiveIdleAfterSecs,
		&ws.ArchiveWarnedAt, &ws.ArchivedSnapshotID, &ws.LastActiveAt)
	if err != nil {
		return nil, err
	}
	if issue != nil {
		ws.VolumeIssue = &cairn.VolumeIssue{Reason: cairn.Reason(*issue), Detail: *issueDetail}
	}
	ws.CreatedAt, ws.UpdatedAt = cairn.Timestamp(ws.CreatedAt), cairn.Timestamp(ws.UpdatedAt)
	ws.LastActiveAt = cairn.Timestamp(ws.LastActiveAt)
	for _, t := range []*time.Time{ws.ExpiresAt, ws.ExpiryWarnedAt, ws.ArchiveWarnedAt} {
		if t != nil {
			*t = cairn.Timestamp(*t)
		}
	}
	return &ws, nil
}

// InsertWorkspace inserts ws as given.
func (db *DB) InsertWorkspace(ctx context.Context, ws *cairn.Workspace) error {
	_, err := db.q.Exec(ctx, `INSERT INTO workspaces
		(id, name, description, volume_name, volume_state, volume_metadata, created_at, updated_at,
		 ttl_secs, expires_at, archive_idle_after_secs, last_active_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		ws.ID, ws.Name, ws.Description, ws.VolumeName, ws.VolumeState, ws.VolumeMetadata,
		ws.CreatedAt, ws.UpdatedAt, ws.TTLSecs, ws.ExpiresAt, ws.ArchiveIdleAfterSecs, activeAt(ws))
	return workspaceWriteError(err, ws)
}

// FindWorkspace reads one workspace.
func (db *DB) FindWorkspace(ctx context.Context, id string) (*cairn.Workspace, error) {
	return db.findWorkspace(ctx, id, "")
}

// LockWorkspaceRow reads one workspace and locks its row for the rest of
// the transaction.
func (db *DB) LockWorkspaceRow(ctx context.Context, id string) (*cairn.Workspace, error) {
	return db.findWorkspace(ctx, id, " FOR UPDATE")
}

func (db *DB) findWorkspace(ctx context.Context, id, suffix string) (*cairn.Workspace, error) {
	ws, err := scanWorkspace(db.q.QueryRow(ctx,
		`SELECT `+workspaceColumns+` FROM workspaces WHERE id = $1`+suffix, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, workspaceNotFound(id)
	}
	if err != nil {
		return nil, internal("find workspace", err)
	}
	return ws, nil
}

// FindWorkspaces lists workspaces in (created_at, id) order.
func (db *DB) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	states := make([]string, len(f.VolumeStates))
	for i, s := range f.VolumeStates {
		states[i] = string(s)
	}
	rows, err := db.q.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces
		WHERE ($1::text[] IS NULL OR name = ANY($1))
		  AND ($2::text[] IS NULL OR volume_state = ANY($2))
		ORDER BY created_at, id OFFSET $3 LIMIT $4`,
		nilIfEmpty(f.Names), nilIfEmpty(states), f.Offset, rowLimit(f.Page))
	if err != nil {
		return nil, internal("list workspaces", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Workspace, error) {
		return scanWorkspace(row)
	})
	if err != nil {
		return nil, internal("list workspaces", err)
	}
	return list, nil
}

// UpdateWorkspace writes the mutable columns of ws.
func (db *DB) UpdateWorkspace(ctx context.Context, ws *cairn.Workspace) error {
	issue, issueDetail := issueColumns(ws.VolumeIssue)
	tag, err := db.q.Exec(ctx, `UPDATE workspaces SET name = $2, description = $3,
		volume_state = $4, volume_metadata = $5, volume_issue = $6, volume_issue_detail = $7,
		updated_at = $8, ttl_secs = $9, expires_at = $10, expiry_warned_at = $11, archive_idle_after_secs = $12,
		archive_warned_at = $13, archived_snapshot_id = $14, last_active_at = $15 WHERE id = $1`,
		ws.ID, ws.Name, ws.Description, ws.VolumeState, ws.VolumeMetadata, issue, issueDetail, ws.UpdatedAt,
		ws.TTLSecs, ws.ExpiresAt, ws.ExpiryWarnedAt, ws.ArchiveIdleAfterSecs, ws.ArchiveWarnedAt, ws.ArchivedSnapshotID,
		activeAt(ws))
	if err != nil {
		return workspaceWriteError(err, ws)
	}
	if tag.RowsAffected() == 0 {
		return workspaceNotFound(ws.ID)
	}
	return nil
}

// issueColumns are the volume_issue columns of issue, both NULL for none.
func issueColumns(issue *cairn.VolumeIssue) (reason, detail *string) {
	if issue == nil {
		return nil, nil
	}
	r := string(issue.Reason)
	return &r, &issue.Detail
}

// DeleteWorkspace records the keys of the workspace's artifacts as released,
// then deletes the row (artifact rows cascade). Call it in a transaction.
func (db *DB) DeleteWorkspace(ctx context.Context, id string, releasedAt time.Time) error {
	if _, err := db.q.Exec(ctx, `INSERT INTO released_objects (object_key, workspace_id, released_at)
		SELECT object_key, workspace_id, $2 FROM artifacts WHERE workspace_id = $1
		ON CONFLICT (object_key) DO NOTHING`, id, releasedAt); err != nil {
		return internal("release workspace objects", err)
	}
	tag, err := db.q.Exec(ctx, `DELETE FROM workspaces WHERE id = $1`, id)
	if err != nil {
		return internal("delete workspace", err)
	}
	if tag.RowsAffected() == 0 {
		return workspaceNotFound(id)
	}
	return nil
}

func workspaceWriteError(err error, ws *cairn.Workspace) error {
	switch {
	case err == nil:
		return nil
	case isUniqueViolation(err):
		return &cairn.Error{Reason: cairn.ReasonNameTaken,
			Detail: "a workspace named '" + ws.Name + "' already exists", Err: err}
	default:
		return internal("write workspace", err)
	}
}

func workspaceNotFound(id string) error {
	return cairn.Errorf(cairn.ReasonWorkspaceNotFound, "workspace '%s' does not exist", id)
}

// rowLimit turns "no limit" into one row past the unpaged maximum, so the
// service can tell a too-large list from a full one.
func rowLimit(p cairn.Page) int {
	if p.Limit == 0 {
		return cairn.MaxUnpagedListLength + 1
	}
	return p.Limit
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// activeAt is the row's last_active_at: a row read before it was known, or
// made by a caller that did not set it, is active as of its creation.
func activeAt(ws *cairn.Workspace) time.Time {
	if ws.LastActiveAt.IsZero() {
		return ws.CreatedAt
	}
	return ws.LastActiveAt
}
