package service

import (
	"context"

	"github.com/cairn-dev/cairn"
)

var _ cairn.AuditService = (*Service)(nil)

// FindAuditEvents reads the audit trail in creation order.
func (s *Service) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	list, err := s.store.FindAuditEvents(ctx, f)
	if err != nil {
		return nil, err
	}
	if f.Limit == 0 && len(list) > cairn.MaxUnpagedListLength {
		return nil, cairn.ErrListTooLarge()
	}
	return list, nil
}
