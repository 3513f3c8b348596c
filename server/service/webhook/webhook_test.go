package webhook_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/service/webhook"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// syncLog is a log the dispatcher writes while the test reads it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestPendingIsBounded: a webhook whose receiver never answers 2xx holds
// at most MaxPending deliveries; what comes past that is dropped, each
// drop logged, while another webhook still gets every event.
func TestPendingIsBounded(t *testing.T) {
	t.Parallel()
	db, err := postgres.Open(context.Background(), stacktest.Database(t))
	require.NoError(t, err)
	t.Cleanup(db.Close)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(down.Close)
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	t.Cleanup(ok.Close)
	log := &syncLog{}
	d, err := webhook.New(webhook.Config{Store: db, MaxPending: 2, Poll: 10 * time.Millisecond,
		Log:     slog.New(slog.NewTextHandler(log, nil)),
		Backoff: func(int) time.Duration { return time.Hour }, // the down hook's deliveries stay pending
		Hooks: []webhook.Hook{
			{Name: "down", URL: down.URL, Secret: []byte("sixteen bytes at least")},
			{Name: "up", URL: ok.URL, Secret: []byte("sixteen bytes at least")},
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- d.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-ran) })

	// One change at a time: the webhook that keeps up never has more than
	// one pending, the other fills up.
	now := cairn.Now()
	for i := range 5 {
		id := uuid.NewString()
		require.NoError(t, db.InsertWorkspace(t.Context(), &cairn.Workspace{ID: id, Name: "ws-" + string(rune('a'+i)),
			VolumeName: "cairn-" + id, VolumeState: cairn.VolumeNone, CreatedAt: now, UpdatedAt: now}))
		require.Eventually(t, func() bool {
			page, err := db.ListDeliveries(t.Context(), cairn.DeliveryFilter{Webhook: "up", State: cairn.DeliveryDelivered, Limit: 10})
			return err == nil && len(page.Deliveries) == i+1
		}, time.Minute, 20*time.Millisecond, "the webhook that keeps up gets every event: %s", log)
	}
	page, err := db.ListDeliveries(t.Context(), cairn.DeliveryFilter{Webhook: "down", Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Deliveries, 2, "the full one holds MaxPending")
	for _, del := range page.Deliveries {
		require.Equal(t, cairn.DeliveryPending, del.State)
	}
	require.Equal(t, 3, strings.Count(log.String(), "too many deliveries pending"), log.String())
}

// TestNewRefusesADuplicateName: two hooks of one name would share their
// deliveries.
func TestNewRefusesADuplicateName(t *testing.T) {
	t.Parallel()
	h := webhook.Hook{Name: "ops", URL: "http://127.0.0.1:1/", Secret: []byte("sixteen bytes at least")}
	_, err := webhook.New(webhook.Config{Hooks: []webhook.Hook{h, h}})
	require.ErrorContains(t, err, `webhook "ops" is named twice`)
}
