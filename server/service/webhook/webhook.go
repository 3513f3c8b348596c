// Package webhook delivers the events of workspaces and artifacts to the
// configured webhooks: signed POSTs, at least once, from the Postgres
// outbox every row change writes in its own transaction
// (migrations/0011_webhooks.sql), so neither a server that was down nor
// one that dies mid-request loses an event.
//
// Each server runs a Dispatcher. Its outbox loop turns outbox rows into
// one delivery per webhook whose filter the event passes; its send loop
// leases due deliveries, POSTs them and records the outcome: delivered on
// a 2xx, else due again after a backoff, failed for good after
// the webhook's MaxAttempts. Every replica must be given the same webhooks.
package webhook

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// Headers of a delivery.
const (
	HeaderDelivery  = "Cairn-Delivery"  // the delivery's ID: the receiver's idempotency key
	HeaderEvent     = "Cairn-Event"     // the event's type
	HeaderTimestamp = "Cairn-Timestamp" // Unix seconds of this attempt, signed with the body
	// HeaderSignature is "sha256=" and the hex HMAC-SHA256, keyed by the
	// webhook's secret, of the timestamp, a '.', and the body.
	HeaderSignature = "Cairn-Signature"
)

// Bounds and defaults of Config.
const (
	DefaultTimeout     = 10 * time.Second
	DefaultMaxAttempts = 10
	DefaultMaxPending  = 10_000 // a webhook's deliveries not yet finished
	DefaultPoll        = time.Second
	keepDelivered      = 24 * time.Hour
	keepFailed         = 7 * 24 * time.Hour
	outboxBatch        = 200
	sendBatch          = 16
	maxErrorText       = 512
	maxBackoff         = 10 * time.Minute
	pruneEvery         = time.Minute
)

// Hook is one configured webhook.
type Hook struct {
	Name   string
	URL    string
	Secret []byte
	// Events are the event types it is sent; none: every type.
	Events []cairn.EventType
	// MaxAttempts of one delivery; 0: DefaultMaxAttempts.
	MaxAttempts int
}

// EventTypes are the types a webhook can be sent.
var EventTypes = []cairn.EventType{cairn.EventWorkspaceUpserted, cairn.EventWorkspaceDeleted,
	cairn.EventArtifactUpserted, cairn.EventArtifactDeleted, cairn.EventSnapshotCreated, cairn.EventSnapshotDeleted,
	cairn.EventWorkspaceExpiring, cairn.EventWorkspaceArchiving}

// NewDelivery is a delivery to make.
type NewDelivery struct {
	ID, Webhook string
	EventType   cairn.EventType
	Payload     []byte
}

// Leased is a delivery a sender holds for one attempt.
type Leased struct {
	ID, Webhook string
	EventType   cairn.EventType
	Payload     []byte
	Attempts    int // this one included
}

// Outcome is how an attempt ended: Delivered, or due again at RetryAt
// (zero: failed for good). Status is the receiver's, if it answered.
type Outcome struct {
	Delivered bool
	RetryAt   time.Time
	Status    *int
	Error     *string
}

// Build turns outbox changes into deliveries, in the dispatching
// transaction.
type Build func(ctx context.Context, changes []service.Change) ([]NewDelivery, error)

// Store is the outbox and the deliveries (server/postgres).
type Store interface {
	service.RowLoader
	DispatchOutbox(ctx context.Context, max int, build Build) (int, error)
	PendingDeliveries(ctx context.Context) (map[string]int, error)
	LeaseDeliveries(ctx context.Context, max int, lease time.Duration) ([]Leased, error)
	FinishAttempt(ctx context.Context, l Leased, o Outcome) error
	PruneDeliveries(ctx context.Context, delivered, failed time.Duration, max int) (int, error)
}

// Config configures a Dispatcher; zero values take the defaults.
type Config struct {
	Hooks   []Hook
	Store   Store
	Log     *slog.Logger
	Version string // in the User-Agent
	// Registerer takes the dispatcher's metrics; nil: none are exported.
	Registerer prometheus.Registerer
	// Client sends the POSTs; nil: one that follows no redirect.
	Client *http.Client
	// Poll is how often the loops look for work when they found none.
	Poll       time.Duration
	Timeout    time.Duration // one attempt
	MaxPending int
	// Backoff is the wait after the failed attempt n (1, 2, …); nil:
	// 2^(n-1) seconds, at most 10 minutes.
	Backoff func(attempt int) time.Duration
}

// Dispatcher runs the outbox and send loops of one server.
type Dispatcher struct {
	cfg     Config
	hooks   map[string]Hook
	metrics *metrics
	pruned  time.Time // the send loop's last prune; only it reads this
}

// New checks the hooks and returns a Dispatcher.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.Poll = cmp.Or(cfg.Poll, DefaultPoll)
	cfg.Timeout = cmp.Or(cfg.Timeout, DefaultTimeout)
	cfg.MaxPending = cmp.Or(cfg.MaxPending, DefaultMaxPending)
	if cfg.Backoff == nil {
		cfg.Backoff = func(n int) time.Duration { return min(time.Second<<min(n-1, 20), maxBackoff) }
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{cfg: cfg, hooks: map[string]Hook{}, metrics: m}
	for _, h := range cfg.Hooks {
		if _, dup := d.hooks[h.Name]; dup {
			return nil, fmt.Errorf("webhook %q is named twice", h.Name)
		}
		h.MaxAttempts = cmp.Or(h.MaxAttempts, DefaultMaxAttempts)
		d.hooks[h.Name] = h
		d.metrics.pending.WithLabelValues(h.Name).Set(0)
	}
	return d, nil
}

// Run runs both loops until ctx ends. Without hooks they still run: the
// outbox is drained, so it does not grow, and deliveries of a webhook no
// longer configured fail.
func (d *Dispatcher) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { d.loop(ctx, d.dispatch) })
	wg.Go(func() { d.loop(ctx, d.send) })
	wg.Wait()
	return nil
}

// loop runs step until ctx ends: at once again while it finds work, after
// Poll when it found none or failed.
func (d *Dispatcher) loop(ctx context.Context, step func(context.Context) (bool, error)) {
	for ctx.Err() == nil {
		busy, err := step(ctx)
		if err != nil && ctx.Err() == nil {
			d.cfg.Log.Warn("webhooks", "err", err)
		}
		if busy && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.cfg.Poll):
		}
	}
}

// dispatch turns one batch of outbox rows into deliveries.
func (d *Dispatcher) dispatch(ctx context.Context) (bool, error) {
	pending, err := d.cfg.Store.PendingDeliveries(ctx)
	if err != nil {
		return false, err
	}
	for name := range d.hooks {
		d.metrics.pending.WithLabelValues(name).Set(float64(pending[name]))
	}
	n, err := d.cfg.Store.DispatchOutbox(ctx, outboxBatch, func(ctx context.Context, changes []service.Change) ([]NewDelivery, error) {
		return d.build(ctx, changes, pending)
	})
	return n == outboxBatch, err
}

// build is the deliveries of changes: one per hook whose filter each
// event passes, while the hook has room.
func (d *Dispatcher) build(ctx context.Context, changes []service.Change, pending map[string]int) ([]NewDelivery, error) {
	if len(d.hooks) == 0 {
		return nil, nil
	}
	evs, err := service.LoadEvents(ctx, d.cfg.Store, changes, cairn.Timestamp(time.Now()))
	if err != nil {
		return nil, err
	}
	var out []NewDelivery
	for _, ev := range evs {
		body, err := json.Marshal(ev)
		if err != nil {
			return nil, err
		}
		for _, h := range d.hooks {
			if len(h.Events) > 0 && !slices.Contains(h.Events, ev.Type) {
				continue
			}
			if pending[h.Name] >= d.cfg.MaxPending {
				d.cfg.Log.Warn("webhook: too many deliveries pending; an event is dropped",
					"webhook", h.Name, "event", ev.Type, "id", ev.ID, "pending", pending[h.Name])
				d.metrics.dropped.WithLabelValues(h.Name).Inc()
				continue
			}
			pending[h.Name]++
			out = append(out, NewDelivery{ID: ulid.Make().String(), Webhook: h.Name, EventType: ev.Type, Payload: body})
		}
	}
	return out, nil
}

// send leases due deliveries and attempts each, a few at a time, and
// prunes finished ones past their retention, once a minute: the
// retentions are days, so each pass need not ask.
func (d *Dispatcher) send(ctx context.Context) (bool, error) {
	if time.Since(d.pruned) >= pruneEvery {
		n, err := d.cfg.Store.PruneDeliveries(ctx, keepDelivered, keepFailed, outboxBatch)
		if err != nil {
			return false, err
		}
		if n < outboxBatch { // a full batch: more are due, pruned on the next pass
			d.pruned = time.Now()
		}
	}
	// The lease outlasts the attempt, so no other sender takes it meanwhile.
	leased, err := d.cfg.Store.LeaseDeliveries(ctx, sendBatch, 2*d.cfg.Timeout)
	if err != nil {
		return false, err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(leased))
	for i, l := range leased {
		wg.Go(func() {
			o := d.attempt(ctx, l)
			if ctx.Err() != nil {
				return // stopping: the lease lapses and the delivery is sent again
			}
			d.metrics.attempts.WithLabelValues(l.Webhook, outcomeOf(o)).Inc()
			errs[i] = d.cfg.Store.FinishAttempt(ctx, l, o)
		})
	}
	wg.Wait()
	return len(leased) == sendBatch, errors.Join(errs...)
}

// attempt POSTs one delivery and says how it went.
func (d *Dispatcher) attempt(ctx context.Context, l Leased) Outcome {
	h, ok := d.hooks[l.Webhook]
	if !ok {
		return d.failed(l, 1, nil, "no webhook of this name is configured on the server that sent it")
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.URL, bytes.NewReader(l.Payload))
	if err != nil {
		return d.failed(l, h.MaxAttempts, nil, "the webhook's URL is not one a request can be made to")
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "cairn/"+d.cfg.Version)
	req.Header.Set(HeaderDelivery, l.ID)
	req.Header.Set(HeaderEvent, string(l.EventType))
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(h.Secret, ts, l.Payload))
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		return d.failed(l, h.MaxAttempts, nil, errorText(err))
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) //nolint:errcheck // only drained, for the connection's reuse
	status := resp.StatusCode
	if status >= 200 && status < 300 {
		return Outcome{Delivered: true, Status: &status}
	}
	return d.failed(l, h.MaxAttempts, &status, "the receiver answered "+resp.Status)
}

// failed is a failed attempt's outcome: due again after the backoff, or
// failed for good after the last of maxAttempts.
func (d *Dispatcher) failed(l Leased, maxAttempts int, status *int, why string) Outcome {
	if len(why) > maxErrorText {
		why = why[:maxErrorText]
	}
	o := Outcome{Status: status, Error: &why}
	if l.Attempts < maxAttempts {
		o.RetryAt = time.Now().Add(d.cfg.Backoff(l.Attempts))
	}
	return o
}

// errorText is a failed request's error without its URL, which may carry
// a credential of the receiver's.
func errorText(err error) string {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "the receiver did not answer in time"
	}
	return err.Error()
}

// Sign is the signature header's value for a body sent at timestamp ts.
func Sign(secret []byte, ts string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}
