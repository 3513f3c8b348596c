package service

import (
	"context"

	"github.com/oklog/ulid/v2"

	"github.com/cairn-dev/cairn"
)

// DeliveryLister pages through the webhook deliveries and sends a failed
// one again.
type DeliveryLister interface {
	ListDeliveries(ctx context.Context, f cairn.DeliveryFilter) (*cairn.DeliveryPage, error)
	// RetryDelivery makes the FAILED delivery id PENDING, due now, its
	// attempts at 0, and writes audit in the same transaction. Reasons:
	// delivery_not_found, delivery_not_failed.
	RetryDelivery(ctx context.Context, id string, audit *cairn.AuditEvent) (*cairn.WebhookDelivery, error)
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

// RetryWebhookDelivery sends a FAILED delivery again, audited. Reasons:
// delivery_not_found, delivery_not_failed, database_unavailable.
func (s *Service) RetryWebhookDelivery(ctx context.Context, id string) (*cairn.WebhookDelivery, error) {
	if !cairn.IsDeliveryID(id) || s.deliveries == nil {
		return nil, cairn.Errorf(cairn.ReasonDeliveryNotFound, "no webhook delivery has the ID %q", id)
	}
	return s.deliveries.RetryDelivery(ctx, id, &cairn.AuditEvent{
		ID: ulid.Make().String(), Type: cairn.AuditWebhookRetried, Actor: cairn.ActorFrom(ctx),
		Metadata: withRequestID(ctx, map[string]any{"delivery_id": id}), CreatedAt: s.now(),
	})
}
