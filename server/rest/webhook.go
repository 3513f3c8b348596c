package rest

import (
	"net/http"

	"github.com/cairn-dev/cairn"
)

// listDeliveries answers GET /v1/webhooks/deliveries.
func (a *API) listDeliveries(r *http.Request) (any, error) {
	q := r.URL.Query()
	f := cairn.DeliveryFilter{Webhook: q.Get("webhook"), State: q.Get("state"), After: q.Get("after")}
	var err error
	if f.Limit, err = intParam(q, "limit"); err != nil {
		return nil, err
	}
	return a.svc.WebhookDeliveries(r.Context(), f)
}

// retryDelivery answers POST /v1/webhooks/deliveries/{deliveryID}/retry.
func (a *API) retryDelivery(r *http.Request) (any, error) {
	d, err := a.svc.RetryWebhookDelivery(r.Context(), r.PathValue("deliveryID"))
	if err != nil {
		return nil, err
	}
	return struct {
		Delivery *cairn.WebhookDelivery `json:"delivery"`
	}{d}, nil
}
