package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
)

// InsertAudit records one event; rows are never updated, so updated_at
// equals created_at.
func (db *DB) InsertAudit(ctx context.Context, ev *cairn.AuditEvent) error {
	_, err := db.q.Exec(ctx, `INSERT INTO audit_system_events
		(id, type, metadata, actor, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		ev.ID, ev.Type, ev.Metadata, ev.Actor, ev.CreatedAt)
	if err != nil {
		return internal("insert audit event", err)
	}
	return nil
}

// FindAuditEvents lists events in (created_at, id) order, reversed when
// f.Newest.
func (db *DB) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	types := make([]string, len(f.Types))
	for i, t := range f.Types {
		types[i] = string(t)
	}
	var workspaceID *string
	if f.WorkspaceID != "" {
		workspaceID = &f.WorkspaceID
	}
	order := "created_at, id"
	if f.Newest {
		order = "created_at DESC, id DESC"
	}
	rows, err := db.q.Query(ctx, `SELECT id, type, actor, coalesce(metadata, '{}'::jsonb),
		coalesce(created_at, to_timestamp(0)) FROM audit_system_events
		WHERE ($1::text IS NULL OR metadata ->> 'workspace_id' = $1)
		  AND ($2::text[] IS NULL OR type = ANY($2))
		ORDER BY `+order+` OFFSET $3 LIMIT $4`,
		workspaceID, nilIfEmpty(types), f.Offset, rowLimit(f.Page))
	if err != nil {
		return nil, internal("list audit events", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*cairn.AuditEvent, error) {
		var ev cairn.AuditEvent
		if err := row.Scan(&ev.ID, &ev.Type, &ev.Actor, &ev.Metadata, &ev.CreatedAt); err != nil {
			return nil, err
		}
		ev.CreatedAt = cairn.Timestamp(ev.CreatedAt)
		return &ev, nil
	})
	if err != nil {
		return nil, internal("list audit events", err)
	}
	return list, nil
}
