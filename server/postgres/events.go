package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
)

// ListenConn opens a connection of its own, outside both pools, for the
// events listener's LISTEN: it lives as long as the listener does and is
// closed by it. The session is named appName, so an operator (or a test)
// can find it in pg_stat_activity.
func (db *DB) ListenConn(ctx context.Context, appName string) (*pgx.Conn, error) {
	cfg := db.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["application_name"] = appName
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open listen connection: %w", err)
	}
	return conn, nil
}

// WorkspacesByID reads the workspaces of ids that exist, in no particular
// order; unknown IDs are left out.
func (db *DB) WorkspacesByID(ctx context.Context, ids []string) ([]*cairn.Workspace, error) {
	rows, err := db.q.Query(ctx, `SELECT `+workspaceColumns+` FROM workspaces WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, internal("load workspaces", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Workspace, error) {
		return scanWorkspace(row)
	})
	if err != nil {
		return nil, internal("load workspaces", err)
	}
	return list, nil
}

// ArtifactsByID reads the artifacts of ids that exist, in no particular
// order; unknown IDs are left out.
func (db *DB) ArtifactsByID(ctx context.Context, ids []string) ([]*cairn.Artifact, error) {
	rows, err := db.q.Query(ctx, `SELECT `+artifactColumns+` FROM artifacts WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, internal("load artifacts", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.Artifact, error) {
		return scanArtifact(row)
	})
	if err != nil {
		return nil, internal("load artifacts", err)
	}
	return list, nil
}

// Notify sends payload on channel to every listener of it, this server's
// own included.
func (db *DB) Notify(ctx context.Context, channel, payload string) error {
	if _, err := db.q.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
		return internal("notify "+channel, err)
	}
	return nil
}
