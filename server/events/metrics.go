package events

import "github.com/prometheus/client_golang/prometheus"

// metrics are the stream's domain metrics.
type metrics struct {
	subscribers prometheus.Gauge
	sent        prometheus.Counter
	resyncs     prometheus.Counter
	latency     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cairn_event_subscribers", Help: "Connected subscribers of the events stream."}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cairn_events_sent_total", Help: "Change frames written to events subscribers."}),
		resyncs: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cairn_event_resyncs_total", Help: "Resync frames written to events subscribers."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "cairn_event_delivery_seconds",
			Help:    "From a change notification's arrival to its frame written to a subscriber.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14), // 0.5 ms … 4 s
		}),
	}
	for _, c := range []prometheus.Collector{m.subscribers, m.sent, m.resyncs, m.latency} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
