package live

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// Pump owns the events subscription: it reads frames, checks seq, and writes
// frames, resync requests and connection transitions into the hub. The
// stream does its own redial backoff (cairn.EventStream); the pump adds one
// only when a subscription cannot even be opened or fails in a way the
// stream does not retry.
type Pump struct {
	svc     cairn.EventService
	hub     *Hub
	now     func() time.Time
	backoff *backoff.ExponentialBackOff // termkit.Redial
	retry   chan struct{}

	once   sync.Once
	cancel context.CancelFunc
	done   chan struct{}
}

// NewPump returns a pump over svc writing into hub; now stamps transitions.
func NewPump(svc cairn.EventService, hub *Hub, now func() time.Time) *Pump {
	return &Pump{
		svc: svc, hub: hub, now: now,
		backoff: termkit.Redial(),
		retry:   make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
}

// Start runs the pump in its own goroutine until Stop or ctx ends.
// Calling it again does nothing.
func (p *Pump) Start(ctx context.Context) {
	p.once.Do(func() {
		ctx, p.cancel = context.WithCancel(ctx)
		go func() {
			defer close(p.done)
			p.run(ctx)
		}()
	})
}

// Stop ends the pump and waits for its goroutine. Safe without Start.
func (p *Pump) Stop() { p.StopWithin(0) }

// StopWithin ends the pump and waits at most d for its goroutine (0: as
// long as it takes); false when it did not end in time. A stream whose Next
// ignores its context is all that can hold it.
func (p *Pump) StopWithin(d time.Duration) bool {
	started := true
	p.once.Do(func() { started = false; close(p.done) })
	if started && p.cancel != nil {
		p.cancel()
	}
	if d <= 0 {
		<-p.done
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Retry restarts a stopped subscription (after a 401) or cuts a wait short.
func (p *Pump) Retry() {
	select {
	case p.retry <- struct{}{}:
	default:
	}
}

func (p *Pump) run(ctx context.Context) {
	for ctx.Err() == nil {
		wait, stopped := p.subscribe(ctx)
		if ctx.Err() != nil {
			return
		}
		if stopped {
			wait = 0 // only an explicit retry restarts
		}
		p.pause(ctx, wait)
	}
}

// pause waits for d, or for a Retry; d == 0 waits for a Retry only.
func (p *Pump) pause(ctx context.Context, d time.Duration) {
	var tick <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-ctx.Done():
	case <-p.retry:
	case <-tick:
	}
}

// subscribe opens one subscription and reads it until it ends. It returns
// how long to wait before opening another, and whether the failure is
// permanent.
func (p *Pump) subscribe(ctx context.Context) (time.Duration, bool) {
	p.hub.Conn(Conn{Kind: ConnDialing, At: p.now()})
	stream, err := p.svc.Events(ctx, cairn.EventFilter{})
	if err != nil {
		return p.failed(err)
	}
	defer func() { _ = stream.Close() }() // nothing to report at the end
	var last int64
	for {
		ev, err := stream.Next(ctx)
		if ctx.Err() != nil {
			return 0, false
		}
		if err != nil {
			var d *cairn.DisconnectedError
			if !errors.As(err, &d) || permanent(err) {
				return p.failed(err)
			}
			last = 0
			p.hub.Conn(Conn{Kind: ConnLost, At: p.now(), RetryIn: d.RetryIn, Unavailable: unavailable(d.Err), Err: err})
			continue
		}
		last = p.frame(ev, last)
	}
}

// frame passes one frame on and returns the new last seq.
func (p *Pump) frame(ev cairn.Event, last int64) int64 {
	switch {
	case ev.Type == cairn.EventHello:
		p.backoff.Reset()
		p.hub.Conn(Conn{Kind: ConnHello, At: p.now(), ServerTime: ev.ServerTime})
		return 0
	case ev.Type == cairn.EventResync:
		p.hub.Resync("server resync")
		return last
	case !ev.IsChange():
		return last
	case ev.Seq <= last:
		return last // repeated or lower: already applied
	case ev.Seq != last+1:
		p.hub.Resync("seq gap")
	}
	// A warning changes no row: it goes beside the change frames, so the
	// per-entity merge of those neither drops it nor lets it replace an
	// upsert of its workspace. Snapshot frames tell the snapshots screens
	// to list again.
	if ev.IsWarning() {
		p.hub.Warning(ev)
	} else {
		p.hub.Event(ev)
	}
	return ev.Seq
}

// failed reports a subscription that ended with err: permanent for a
// rejected token, otherwise retried after termkit.Redial's next wait (its
// 30 s cap when the server has no events endpoint).
func (p *Pump) failed(err error) (time.Duration, bool) {
	if permanent(err) {
		p.hub.Conn(Conn{Kind: ConnStopped, At: p.now(), Err: err})
		return 0, true
	}
	wait := p.backoff.NextBackOff()
	if unavailable(err) {
		wait = termkit.RedialMax
	}
	p.hub.Conn(Conn{Kind: ConnLost, At: p.now(), RetryIn: wait, Unavailable: unavailable(err), Err: err})
	return wait, false
}

func permanent(err error) bool {
	switch cairn.ErrorReason(err) {
	case cairn.ReasonUnauthenticated, cairn.ReasonForbidden:
		return true
	}
	return false
}

// unavailable reports an events endpoint the server does not have.
func unavailable(err error) bool {
	var e *cairn.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Status == http.StatusNotFound || e.Status == http.StatusNotImplemented
}
