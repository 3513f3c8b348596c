package cairn

import (
	"context"
	"strings"
	"time"
)

// States of a webhook delivery.
const (
	DeliveryPending   = "PENDING"   // waiting for its next attempt
	DeliveryDelivered = "DELIVERED" // the receiver answered 2xx
	DeliveryFailed    = "FAILED"    // every attempt failed: it is not sent again
)

// WebhookDelivery is one event on its way to one webhook, as
// GET /v1/webhooks/deliveries lists it. ID is the delivery's, sent in the
// Cairn-Delivery header: a receiver that sees it twice has it already.
type WebhookDelivery struct {
	ID         string     `json:"id"`
	Webhook    string     `json:"webhook"`
	EventType  EventType  `json:"event_type"`
	State      string     `json:"state"`
	Attempts   int        `json:"attempts"`
	NextAt     *time.Time `json:"next_at,omitempty"` // while PENDING
	LastStatus *int       `json:"last_status,omitempty"`
	LastError  *string    `json:"last_error,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// DeliveryFilter selects deliveries: by webhook and state ("" for any),
// newest first, Limit at a time after the ID After.
type DeliveryFilter struct {
	Webhook string
	State   string
	Limit   int
	After   string
}

// DeliveryPage is one page of deliveries; NextAfter continues it.
type DeliveryPage struct {
	Deliveries []WebhookDelivery `json:"deliveries"`
	NextAfter  string            `json:"next_after,omitempty"`
}

// DefaultDeliveryLimit is a delivery page's size when the filter names none.
const DefaultDeliveryLimit = 100

// Validate checks the filter and fills the default limit.
func (f *DeliveryFilter) Validate() error {
	switch f.State {
	case "", DeliveryPending, DeliveryDelivered, DeliveryFailed:
	default:
		return Errorf(ReasonInvalidQuery, "'state' must be PENDING, DELIVERED or FAILED")
	}
	if f.Webhook != "" {
		if err := ValidateName("webhook", f.Webhook); err != nil {
			return Errorf(ReasonInvalidQuery, "'webhook': %s", ErrorDetail(err))
		}
	}
	if f.Limit < 0 || f.Limit > MaxListLimit {
		return Errorf(ReasonInvalidQuery, "'limit' must be between 1 and %d", MaxListLimit)
	}
	if f.Limit == 0 {
		f.Limit = DefaultDeliveryLimit
	}
	if f.After != "" && !isULID(f.After) {
		return Errorf(ReasonInvalidQuery, "'after' must be a delivery ID a page gave")
	}
	return nil
}

// crockford is the alphabet of ULIDs.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// isULID: 26 characters of Crockford's base 32, as delivery IDs are.
func isULID(s string) bool {
	if len(s) != 26 {
		return false
	}
	for _, c := range []byte(s) {
		if !strings.ContainsRune(crockford, rune(c)) {
			return false
		}
	}
	return true
}

// WebhookService lists webhook deliveries and sends a failed one again.
type WebhookService interface {
	// WebhookDeliveries pages through deliveries, newest first. Reasons:
	// invalid_query.
	WebhookDeliveries(ctx context.Context, f DeliveryFilter) (*DeliveryPage, error)
	// RetryWebhookDelivery makes a FAILED delivery PENDING again, due now,
	// with its attempts counted afresh. Reasons: delivery_not_found,
	// delivery_not_failed.
	RetryWebhookDelivery(ctx context.Context, id string) (*WebhookDelivery, error)
}

// IsDeliveryID: a delivery ID is a ULID.
func IsDeliveryID(s string) bool { return isULID(s) }
