package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/cairn-dev/cairn"
)

var _ cairn.WebhookService = (*Client)(nil)

// WebhookDeliveries reads one page of webhook deliveries, newest first
// (scope admin); the page's NextAfter, as f.After, reads the next.
func (c *Client) WebhookDeliveries(ctx context.Context, f cairn.DeliveryFilter) (*cairn.DeliveryPage, error) {
	q := url.Values{}
	for k, v := range map[string]string{"webhook": f.Webhook, "state": f.State, "after": f.After} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var page cairn.DeliveryPage
	if err := c.get(ctx, pathOf("webhooks", "deliveries"), q, &page); err != nil {
		return nil, err
	}
	return &page, nil
}

// RetryWebhookDelivery sends a FAILED delivery again (scope admin): it is
// PENDING and due at once, its attempts counted afresh.
func (c *Client) RetryWebhookDelivery(ctx context.Context, id string) (*cairn.WebhookDelivery, error) {
	var out struct {
		Delivery *cairn.WebhookDelivery `json:"delivery"`
	}
	if err := c.do(ctx, call{method: http.MethodPost, path: pathOf("webhooks", "deliveries", id, "retry")}, &out); err != nil {
		return nil, err
	}
	return out.Delivery, nil
}
