package tuitest

import (
	"context"

	"github.com/cairn-dev/cairn"
)

// KillShell ends nothing unless KillShellFunc says otherwise.
func (b *Backend) KillShell(ctx context.Context, id string) error {
	if b.KillShellFunc != nil {
		return b.KillShellFunc(ctx, id)
	}
	return cairn.ErrShellNotFound(id)
}

// FindAuditEvents lists nothing unless AuditFunc says otherwise.
func (b *Backend) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	if b.AuditFunc != nil {
		return b.AuditFunc(ctx, f)
	}
	return []*cairn.AuditEvent{}, nil
}
