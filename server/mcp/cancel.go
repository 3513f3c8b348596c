package mcp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"

	"github.com/cairn-dev/cairn"
)

// Calls holds the cancel of every request the endpoint is serving, by
// caller and JSON-RPC ID, so that a notifications/cancelled ends the
// caller's own request and no one else's. The transport matches a cancel
// by ID alone on a stateless endpoint, where every client shares the one
// empty session: one client's cancel of its request 1 would end another
// client's request 1. Cancels therefore never reach the transport.
//
// Behind a load balancer a cancel may reach another replica than its
// request: a cancel that matches nothing here is broadcast, and every
// replica's Receive tries it against its own requests.
type Calls struct {
	broadcast Broadcast
	log       *slog.Logger

	mu    sync.Mutex
	calls map[callKey]context.CancelFunc // one per request being served
}

// Broadcast hands payload to the Receive of every replica's Calls, this
// one's included (server: a Postgres NOTIFY on CancelChannel).
type Broadcast func(ctx context.Context, payload string) error

// CancelChannel is the Postgres channel of the replicas' cancels.
const CancelChannel = "cairn_mcp_cancel"

// maxBroadcast bounds a broadcast cancel: a NOTIFY payload must stay
// under 8000 bytes, and no client's real request ID comes near.
const maxBroadcast = 2048

// callKey names a request: the caller (the token's actor; empty without
// tokens) and its JSON-RPC ID as sent, the JSON text.
type callKey struct {
	Caller string `json:"caller"`
	ID     string `json:"id"`
}

// message is what inflight reads of a JSON-RPC message.
type message struct {
	Method string          `json:"method"`
	ID     json.RawMessage `json:"id"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// NewCalls returns an empty registry; a nil broadcast keeps cancels on
// this replica, a nil log discards.
func NewCalls(broadcast Broadcast, log *slog.Logger) *Calls {
	return &Calls{broadcast: broadcast, log: cmp.Or(log, slog.New(slog.DiscardHandler)), calls: map[callKey]context.CancelFunc{}}
}

// scope serves next with each request registered while it runs, and
// answers a notifications/cancelled itself, 202 Accepted as the transport
// answers any notification, after cancelling the caller's request it
// names (if it is still running). It reads the body boundBody read; what
// is not a single JSON-RPC object goes to next as it is, to be refused
// there.
func (f *Calls) scope(next http.Handler) func(http.ResponseWriter, *http.Request, []byte) {
	return func(w http.ResponseWriter, r *http.Request, body []byte) {
		var msg message
		if r.Method != http.MethodPost || json.Unmarshal(body, &msg) != nil {
			next.ServeHTTP(w, r)
			return
		}
		caller := deref(cairn.ActorFrom(r.Context()))
		switch {
		case msg.Method == "notifications/cancelled":
			f.cancel(r.Context(), callKey{Caller: caller, ID: string(bytes.TrimSpace(msg.Params.RequestID))})
			w.WriteHeader(http.StatusAccepted)
		case len(msg.ID) > 0:
			ctx, done := f.start(r.Context(), callKey{Caller: caller, ID: string(bytes.TrimSpace(msg.ID))})
			defer done()
			next.ServeHTTP(w, r.WithContext(ctx))
		default:
			next.ServeHTTP(w, r)
		}
	}
}

// start registers a request; done removes it. A second request of the
// caller under an ID in flight is served, but a cancel names the first.
func (f *Calls) start(ctx context.Context, key callKey) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, taken := f.calls[key]; taken {
		return ctx, cancel
	}
	f.calls[key] = cancel
	return ctx, func() {
		f.mu.Lock()
		delete(f.calls, key)
		f.mu.Unlock()
		cancel()
	}
}

// cancel ends the request key names if this replica serves it, and
// hands it to the others otherwise.
func (f *Calls) cancel(ctx context.Context, key callKey) {
	if f.cancelHere(key) || f.broadcast == nil {
		return
	}
	payload, err := json.Marshal(key)
	if err != nil || len(payload) > maxBroadcast {
		return // a cancel of no request any client makes
	}
	if err := f.broadcast(ctx, string(payload)); err != nil {
		f.log.WarnContext(ctx, "mcp cancel not broadcast to the other replicas", "err", err)
	}
}

// Receive tries a broadcast cancel against this replica's requests.
func (f *Calls) Receive(payload string) {
	var key callKey
	if err := json.Unmarshal([]byte(payload), &key); err != nil {
		f.log.Warn("mcp cancel broadcast unreadable", "err", err)
		return
	}
	f.cancelHere(key)
}

// cancelHere ends the request key names, if this replica serves it.
func (f *Calls) cancelHere(key callKey) bool {
	f.mu.Lock()
	cancel := f.calls[key]
	f.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return cancel != nil
}
