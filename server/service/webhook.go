package service

import (
	"context"

	"github.com/cairn-dev/cairn"
)

// DeliveryLister pages through the webhook deliveries.
type DeliveryLister interface {
	ListDeliveries(ctx context.Context, f cairn.DeliveryFilter) (*cairn.DeliveryPage, error)
}

// WebhookDeliveries pages through the webhook deliveries, newest first.
// Reasons: invalid_query, database_unavailable.
func (s *Service) WebhookDeliveries(ctx context.Context, f cairn.DeliveryFilter) (*cairn.DeliveryPage, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if s.deliveries == nil {
		return &cairn.DeliveryPage{Deliveries: []cairn.WebhookDelivery{}}, nil
	}
	return s.deliveries.ListDeliveries(ctx, f)
}
