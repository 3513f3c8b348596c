package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// TestCLIWebhooks: a server binary with a webhook from its config file
// sends a new workspace's event to the receiver, which refuses it; cairn
// webhooks shows the failed delivery as the REST route does.
func TestCLIWebhooks(t *testing.T) {
	t.Parallel()
	posts := make(chan string, 16)
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
		posts <- r.Header.Get("Cairn-Event")
	}))
	t.Cleanup(rcv.Close)
	secret := filepath.Join(t.TempDir(), "hook.secret")
	require.NoError(t, os.WriteFile(secret, []byte("sixteen bytes and then some\n"), 0o600))
	s := startCLIServerWith(t, fmt.Sprintf("webhooks:\n  - {name: ops, url: %q, secretFile: %q, maxAttempts: 1}\n", rcv.URL, secret))

	s.ok(t, "ws", "create", uniqueName("hooked"))
	select {
	case ev := <-posts:
		require.Equal(t, string(cairn.EventWorkspaceUpserted), ev)
	case <-time.After(time.Minute):
		t.Fatal("the receiver was sent nothing within a minute")
	}
	var failed []cairn.WebhookDelivery
	require.Eventually(t, func() bool {
		failed = field[[]cairn.WebhookDelivery](t, s.json(t, "webhooks", "--state", "failed"), "deliveries")
		return len(failed) == 1
	}, time.Minute, 50*time.Millisecond, "the refused delivery is failed")
	require.Equal(t, "the receiver answered 418 I'm a teapot", *failed[0].LastError)
	requireSameJSON(t, s.rest(t, "GET", "/v1/webhooks/deliveries?state=FAILED"), s.json(t, "webhooks", "--state", "FAILED"))
	table := s.ok(t, "webhooks", "--webhook", "ops", "-o", "table").stdout
	require.Regexp(t, `(?m)^AGE +WEBHOOK +EVENT +STATE +TRIES +LAST\n.+ops +workspace\.upserted +FAILED +1 +the receiver answered 418`, table)
	again := field[cairn.WebhookDelivery](t, s.json(t, "webhooks", "retry", failed[0].ID), "delivery")
	require.Equal(t, cairn.DeliveryPending, again.State)
	select {
	case <-posts:
	case <-time.After(time.Minute):
		t.Fatal("the retried delivery was not sent within a minute")
	}
	s.fails(t, 3, "webhooks", "retry", "01JZ8X3M6Q4W5E7R9T1Y2V3K4P")
	s.fails(t, 2, "webhooks", "retry")
	s.fails(t, 2, "webhooks", "--state", "LOST")
	s.fails(t, 2, "webhooks", "--limit", "5000")
	reader := s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": cliReadToken}, "webhooks")
	require.Equal(t, 5, reader.code, "admin only")
}
