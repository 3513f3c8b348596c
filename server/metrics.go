package server

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cairn-dev/cairn"
)

// newRegistry is the process's private metrics registry, with the Go
// runtime and process collectors when metrics.features.enableAppMetrics.
func newRegistry(cfg MetricsConfig) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	if cfg.Features.EnableAppMetrics {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	return reg
}

// httpMetrics counts API requests under the first cairn's metric names,
// labelled by method and status class.
type httpMetrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.CounterVec
	size     *prometheus.CounterVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	labels := []string{"method", "status"}
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_request_total", Help: "API requests answered."}, labels),
		latency: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_request_latency_secs_total", Help: "Seconds spent answering API requests."}, labels),
		size: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_response_size_bytes_total", Help: "Bytes of API response bodies."}, labels),
	}
	reg.MustRegister(m.requests, m.latency, m.size)
	return m
}

// wrap records every request that next answers.
func (m *httpMetrics) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		labels := prometheus.Labels{"method": strings.ToUpper(r.Method), "status": strconv.Itoa(rec.status/100) + "XX"}
		m.requests.With(labels).Inc()
		m.latency.With(labels).Add(time.Since(start).Seconds())
		m.size.With(labels).Add(float64(rec.bytes))
	})
}

// recorder notes the status and body size of a response.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *recorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController reach the connection (flushes,
// websocket upgrades).
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Flush is http.Flusher's, for handlers that stream by type assertion
// rather than through a ResponseController (the MCP transport's event
// streams).
func (r *recorder) Flush() {
	_ = http.NewResponseController(r.ResponseWriter).Flush()
}

// metricsHandler serves the registry on the metrics path (GET, and POST as
// the first cairn did), at most maxRequests scrapes at once.
func metricsHandler(reg *prometheus.Registry, cfg MetricsConfig, extra func(*http.ServeMux)) http.Handler {
	mux := http.NewServeMux()
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		MaxRequestsInFlight: cfg.MaxRequests, EnableOpenMetrics: true, Registry: reg,
	})
	mux.Handle("GET "+cfg.MetricsEndpoint, h)
	mux.Handle("POST "+cfg.MetricsEndpoint, h)
	if extra != nil {
		extra(mux)
	}
	return mux
}

// reconcileMetrics exports each pass's counters.
type reconcileMetrics struct {
	items       *prometheus.CounterVec
	duration    prometheus.Summary
	lastSuccess prometheus.Gauge
}

func newReconcileMetrics(reg prometheus.Registerer) *reconcileMetrics {
	m := &reconcileMetrics{
		items: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_reconcile_items_total", Help: "Items examined and changed by reconciliation passes."}, []string{"counter"}),
		duration: prometheus.NewSummary(prometheus.SummaryOpts{
			Name: "cairn_reconcile_pass_duration_seconds", Help: "Duration of reconciliation passes."}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cairn_reconcile_last_success_timestamp_seconds", Help: "When the last pass without an SQL error ended."}),
	}
	reg.MustRegister(m.items, m.duration, m.lastSuccess)
	return m
}

func (m *reconcileMetrics) observe(res *cairn.SweepResult, err error) {
	if res == nil {
		return
	}
	for name, n := range map[string]int{
		"volumes_examined": res.VolumesExamined, "volumes_adopted": res.VolumesAdopted,
		"volumes_cleared": res.VolumesCleared, "volumes_orphaned": res.VolumesOrphaned,
		"staging_examined": res.StagingExamined, "staging_deleted": res.StagingDeleted,
		"storage_examined": res.StorageExamined, "storage_deleted": res.StorageDeleted,
		"artifacts_flagged": res.ArtifactsFlagged, "released_pruned": res.ReleasedPruned,
		"containers_removed": res.ContainersRemoved, "uploads_aborted": res.UploadsAborted,
	} {
		m.items.WithLabelValues(name).Add(float64(n))
	}
	m.duration.Observe(res.FinishedAt.Sub(res.StartedAt).Seconds())
	if err == nil {
		m.lastSuccess.Set(float64(res.FinishedAt.Unix()))
	}
}

// transferMetrics are the domain metrics of sidecars and volume transfers.
type transferMetrics struct {
	runs     *prometheus.CounterVec
	duration *prometheus.HistogramVec
	bytes    *prometheus.CounterVec
}

func newTransferMetrics(reg prometheus.Registerer, running func() int) *transferMetrics {
	m := &transferMetrics{
		runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_sidecar_runs_total", Help: "Sidecar runs, by command and result (ok, failed, timeout, error)."},
			[]string{"command", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "cairn_sidecar_duration_seconds", Help: "How long sidecar runs took, by command.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}}, []string{"command"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cairn_transfer_bytes_total", Help: "Bytes moved by volume transfers that succeeded, by direction."},
			[]string{"direction"}),
	}
	reg.MustRegister(m.runs, m.duration, m.bytes, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cairn_sidecars_running", Help: "Sidecars this process runs or is starting now.",
	}, func() float64 { return float64(running()) }))
	return m
}

func (m *transferMetrics) sidecar(command, result string, took time.Duration) {
	m.runs.WithLabelValues(command, result).Inc()
	m.duration.WithLabelValues(command).Observe(took.Seconds())
}

func (m *transferMetrics) transfer(direction string, n int64) {
	m.bytes.WithLabelValues(direction).Add(float64(n))
}
