package webhook

import "github.com/prometheus/client_golang/prometheus"

// metrics are the dispatcher's: what its attempts ended in, what it
// dropped, what waits.
type metrics struct {
	attempts *prometheus.CounterVec // by webhook and outcome: delivered, retry, failed
	dropped  *prometheus.CounterVec // by webhook
	pending  *prometheus.GaugeVec   // by webhook
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_webhook_attempts_total",
			Help: "Webhook delivery attempts by this process, by webhook and outcome (delivered, retry, failed)."},
			[]string{"webhook", "outcome"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "cairn_webhook_dropped_total",
			Help: "Events not made into a delivery because their webhook had too many pending."}, []string{"webhook"}),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "cairn_webhook_pending",
			Help: "Deliveries waiting for an attempt, by webhook, as this process last counted them."}, []string{"webhook"}),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.attempts, m.dropped, m.pending} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// outcomeOf names an attempt's outcome for the metric.
func outcomeOf(o Outcome) string {
	switch {
	case o.Delivered:
		return "delivered"
	case o.RetryAt.IsZero():
		return "failed"
	}
	return "retry"
}
