package server_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/server/service/webhook"
)

// hookWait bounds the wait for one delivery: a failure deadline.
const hookWait = time.Minute

// posted is one POST a receiver took.
type posted struct {
	header http.Header
	body   []byte
	event  cairn.Event
}

// receiver is a webhook endpoint that answers each POST with what answer
// says (its n-th attempt of that delivery, from 1) and passes it on.
type receiver struct {
	url   string
	posts chan posted

	mu    sync.Mutex
	tries map[string]int
}

func newReceiver(t *testing.T, answer func(try int) int) *receiver {
	t.Helper()
	r := &receiver{posts: make(chan posted, 256), tries: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		p := posted{header: req.Header.Clone(), body: body}
		_ = json.Unmarshal(body, &p.event)
		r.mu.Lock()
		r.tries[req.Header.Get(webhook.HeaderDelivery)]++
		try := r.tries[req.Header.Get(webhook.HeaderDelivery)]
		r.mu.Unlock()
		w.WriteHeader(answer(try))
		r.posts <- p
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hook?token=receiver-credential"
	return r
}

func always(status int) func(int) int { return func(int) int { return status } }

// await returns the next POST that has, failing after hookWait.
func (r *receiver) await(t *testing.T, what string, has func(posted) bool) posted {
	t.Helper()
	deadline := time.After(hookWait)
	for {
		select {
		case p := <-r.posts:
			if has(p) {
				return p
			}
		case <-deadline:
			t.Fatalf("no POST of %s within %s", what, hookWait)
		}
	}
}

func secretFile(t *testing.T, secret string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hook.secret")
	require.NoError(t, os.WriteFile(p, []byte(secret+"\n"), 0o600))
	return p
}

func deliveries(t *testing.T, api *client.Client, webhook, state string) []cairn.WebhookDelivery {
	t.Helper()
	page, err := api.WebhookDeliveries(t.Context(), cairn.DeliveryFilter{Webhook: webhook, State: state})
	require.NoError(t, err)
	return page.Deliveries
}

// TestWebhooksDeliverSignedEvents: a workspace's changes reach the webhook
// that asks for them as signed POSTs of the stream's event, each with a
// delivery ID, and nothing reaches one that asks for other events.
func TestWebhooksDeliverSignedEvents(t *testing.T) {
	t.Parallel()
	const secret = "a secret of the receiver's, 32 b"
	ops := newReceiver(t, always(http.StatusNoContent))
	arts := newReceiver(t, always(http.StatusOK))
	cfg, secrets := testConfig(t)
	cfg.Webhooks = []server.WebhookConfig{
		{Name: "ops", URL: ops.url, SecretFile: secretFile(t, secret), Events: []string{"workspace.upserted", "workspace.deleted"}},
		{Name: "arts", URL: arts.url, SecretFile: secretFile(t, secret), Events: []string{"artifact.upserted"}},
	}
	srv := startServer(t, cfg, secrets, nil)
	api, err := client.New("http://" + srv.APIAddr())
	require.NoError(t, err)

	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "hooked"})
	require.NoError(t, err)
	p := ops.await(t, "the new workspace", func(p posted) bool {
		return p.event.Type == cairn.EventWorkspaceUpserted && p.event.ID == ws.ID
	})
	require.Equal(t, "hooked", p.event.Workspace.Name)
	ts := p.header.Get(webhook.HeaderTimestamp)
	// As docs/operations.md tells a receiver to check it.
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "." + string(p.body)))
	require.Equal(t, "sha256="+hex.EncodeToString(mac.Sum(nil)), p.header.Get(webhook.HeaderSignature), "signed with the trimmed secret")
	require.Equal(t, string(cairn.EventWorkspaceUpserted), p.header.Get(webhook.HeaderEvent))
	require.Len(t, p.header.Get(webhook.HeaderDelivery), 26)
	require.Equal(t, "application/json", p.header.Get("Content-Type"))

	require.NoError(t, api.DeleteWorkspace(t.Context(), ws.ID))
	ops.await(t, "the deleted workspace", func(p posted) bool {
		return p.event.Type == cairn.EventWorkspaceDeleted && p.event.ID == ws.ID
	})
	// The delete's deliveries were made with those of every change before it.
	require.Empty(t, deliveries(t, api, "arts", ""), "no workspace event matches arts' filter")
	// The receiver passes a POST on before its answer is recorded.
	var delivered []cairn.WebhookDelivery
	require.Eventually(t, func() bool {
		delivered = deliveries(t, api, "ops", cairn.DeliveryDelivered)
		return len(delivered) >= 2
	}, hookWait, 50*time.Millisecond, "both recorded as delivered")
	for _, d := range delivered {
		require.Equal(t, 1, d.Attempts)
		require.Equal(t, http.StatusNoContent, *d.LastStatus)
		require.NotNil(t, d.FinishedAt)
	}
}

// TestWebhooksRetryThenFail: a receiver that fails is sent the same
// delivery again until it answers 2xx, and one that never does is given
// up on after its maxAttempts, the last answer kept for the operator —
// without the URL's credential.
func TestWebhooksRetryThenFail(t *testing.T) {
	t.Parallel()
	flaky := newReceiver(t, func(try int) int {
		if try < 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	down := newReceiver(t, always(http.StatusServiceUnavailable))
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // nothing listens at its address any more
	cfg, secrets := testConfig(t)
	key := secretFile(t, "sixteen bytes at least")
	cfg.Webhooks = []server.WebhookConfig{
		{Name: "flaky", URL: flaky.url, SecretFile: key},
		{Name: "down", URL: down.url, SecretFile: key, MaxAttempts: 2},
		{Name: "gone", URL: gone.URL + "/hook?token=receiver-credential", SecretFile: key, MaxAttempts: 1},
	}
	srv := startServer(t, cfg, secrets, nil)
	api, err := client.New("http://" + srv.APIAddr())
	require.NoError(t, err)
	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "retried"})
	require.NoError(t, err)

	first := flaky.await(t, "the first attempt", func(p posted) bool { return p.event.ID == ws.ID })
	id := first.header.Get(webhook.HeaderDelivery)
	for _, what := range []string{"the second attempt", "the third attempt"} {
		flaky.await(t, what, func(p posted) bool { return p.header.Get(webhook.HeaderDelivery) == id })
	}

	require.Eventually(t, func() bool {
		got := deliveries(t, api, "flaky", cairn.DeliveryDelivered)
		return len(got) == 1 && got[0].ID == id && got[0].Attempts == 3
	}, hookWait, 50*time.Millisecond, "delivered on the third attempt")
	var failed []cairn.WebhookDelivery
	require.Eventually(t, func() bool {
		failed = deliveries(t, api, "down", cairn.DeliveryFailed)
		return len(failed) == 1
	}, hookWait, 50*time.Millisecond, "failed after two attempts")
	require.Equal(t, 2, failed[0].Attempts)
	require.Equal(t, http.StatusServiceUnavailable, *failed[0].LastStatus)
	require.Equal(t, "the receiver answered 503 Service Unavailable", *failed[0].LastError)
	require.Nil(t, failed[0].NextAt)
	downID := failed[0].ID
	require.Eventually(t, func() bool {
		failed = deliveries(t, api, "gone", cairn.DeliveryFailed)
		return len(failed) == 1
	}, hookWait, 50*time.Millisecond, "failed at its one attempt")
	require.Nil(t, failed[0].LastStatus)
	require.Contains(t, *failed[0].LastError, "connection refused")
	require.NotContains(t, *failed[0].LastError, "receiver-credential", "no part of the URL in the error")

	// Sent again on the operator's word: due at once, its attempts afresh.
	again, err := api.RetryWebhookDelivery(t.Context(), downID)
	require.NoError(t, err)
	require.Equal(t, cairn.DeliveryPending, again.State)
	require.Zero(t, again.Attempts)
	tries := 0 // its two first attempts are still queued at the receiver
	down.await(t, "the delivery sent again", func(p posted) bool {
		if p.header.Get(webhook.HeaderDelivery) == downID {
			tries++
		}
		return tries == 3
	})
	require.Eventually(t, func() bool {
		got := deliveries(t, api, "down", cairn.DeliveryFailed)
		return len(got) == 1 && got[0].Attempts == 2
	}, hookWait, 50*time.Millisecond, "failed again after two more attempts")
	_, err = api.RetryWebhookDelivery(t.Context(), id)
	require.Equal(t, cairn.ReasonDeliveryNotFailed, cairn.ErrorReason(err), "a delivered one is not sent again")
	_, err = api.RetryWebhookDelivery(t.Context(), "01JZ8X3M6Q4W5E7R9T1Y2V3K4P")
	require.Equal(t, cairn.ReasonDeliveryNotFound, cairn.ErrorReason(err))
	_, err = api.RetryWebhookDelivery(t.Context(), "not-an-id")
	require.Equal(t, cairn.ReasonDeliveryNotFound, cairn.ErrorReason(err))
	audit, err := api.FindAuditEvents(t.Context(), cairn.AuditFilter{Types: []cairn.AuditType{cairn.AuditWebhookRetried}})
	require.NoError(t, err)
	require.Len(t, audit, 1, "the retry is audited, the refusals are not")
	require.Equal(t, downID, audit[0].Metadata["delivery_id"])

	_, metrics := call(t, http.MethodGet, "http://"+srv.MetricsAddr()+cfg.Metrics.MetricsEndpoint, "")
	for _, line := range []string{
		`cairn_webhook_attempts_total{outcome="delivered",webhook="flaky"} 1`,
		`cairn_webhook_attempts_total{outcome="retry",webhook="flaky"} 2`,
		`cairn_webhook_attempts_total{outcome="retry",webhook="down"} 2`,
		`cairn_webhook_attempts_total{outcome="failed",webhook="down"} 2`,
		`cairn_webhook_attempts_total{outcome="failed",webhook="gone"} 1`,
	} {
		require.Contains(t, metrics, line+"\n")
	}
	require.Regexp(t, `cairn_webhook_pending\{webhook="flaky"\} \d`, metrics)

	status, body := call(t, http.MethodGet, "http://"+srv.APIAddr()+"/v1/webhooks/deliveries?state=LOST", "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, `"reason":"invalid_query"`)
}

// TestWebhooksSurviveRestart: what a server could not deliver before it
// stopped, and a change made while no server ran, are delivered by the
// next server — the first under the delivery ID it had.
func TestWebhooksSurviveRestart(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	status.Store(http.StatusServiceUnavailable)
	rcv := newReceiver(t, func(int) int { return int(status.Load()) })
	cfg, secrets := testConfig(t)
	cfg.Webhooks = []server.WebhookConfig{{Name: "ops", URL: rcv.url, SecretFile: secretFile(t, "sixteen bytes at least")}}

	stop := serveUntil(t, cfg, secrets)
	api, err := client.New("http://" + stop.addr)
	require.NoError(t, err)
	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "kept"})
	require.NoError(t, err)
	refused := rcv.await(t, "the refused attempt", func(p posted) bool { return p.event.ID == ws.ID })
	stop.stop()

	conn, err := pgx.Connect(t.Context(), server.DatabaseURL(cfg.Persistence.SQL.App, secrets.SQLPassword))
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), `UPDATE workspaces SET description = 'changed while no server ran' WHERE id = $1`, ws.ID)
	require.NoError(t, err)

	status.Store(http.StatusOK)
	serveUntil(t, cfg, secrets)
	// In either order: deliveries are sent a few at a time.
	seen := map[string]bool{}
	rcv.await(t, "the first delivery again and the change made offline", func(p posted) bool {
		if p.header.Get(webhook.HeaderDelivery) == refused.header.Get(webhook.HeaderDelivery) {
			seen["again"] = true
		}
		if d := p.event.Workspace; d != nil && d.Description != nil && *d.Description == "changed while no server ran" {
			seen["offline"] = true
		}
		return seen["again"] && seen["offline"]
	})
}

// served is a server the test stops itself.
type served struct {
	addr string
	stop func()
}

func serveUntil(t *testing.T, cfg server.Config, secrets server.Secrets) served {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg, secrets, server.Options{Migrate: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		cancel()
		require.NoError(t, err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
			srv.Close()
		})
	}
	t.Cleanup(stop)
	return served{addr: srv.APIAddr(), stop: stop}
}
