package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ListVersions = (*DB)(nil)

// WorkspaceListVersion reads the workspace list's version: the sum of the
// stripes its trigger bumps (migrations/0005_list_etag.sql).
func (db *DB) WorkspaceListVersion(ctx context.Context) (int64, error) {
	var v int64
	if err := db.q.QueryRow(ctx, `SELECT sum(version)::bigint FROM workspace_list_versions`).Scan(&v); err != nil {
		return 0, internal("read the workspace list version", err)
	}
	return v, nil
}

// ArtifactListVersion reads the version of a workspace's artifact list, 0
// before its first artifact change.
func (db *DB) ArtifactListVersion(ctx context.Context, workspaceID string) (int64, error) {
	var v int64
	err := db.q.QueryRow(ctx, `SELECT coalesce(v.version, 0) FROM workspaces w
		LEFT JOIN artifact_list_versions v ON v.workspace_id = w.id WHERE w.id = $1`, workspaceID).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, workspaceNotFound(workspaceID)
	}
	if err != nil {
		return 0, internal("read the artifact list version", err)
	}
	return v, nil
}
