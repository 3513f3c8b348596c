package postgres

import (
	"context"

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
