package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/server/service/webhook"
)

// takeAll dispatches the whole outbox, one delivery a change, and returns
// the changes in the order the build saw them.
func takeAll(t *testing.T, db interface {
	DispatchOutbox(context.Context, int, webhook.Build) (int, error)
}) []service.Change {
	t.Helper()
	var seen []service.Change
	for {
		n, err := db.DispatchOutbox(t.Context(), 100, func(_ context.Context, cs []service.Change) ([]webhook.NewDelivery, error) {
			seen = append(seen, cs...)
			out := make([]webhook.NewDelivery, len(cs))
			for i, c := range cs {
				out[i] = webhook.NewDelivery{ID: ulid.Make().String(), Webhook: "ops", EventType: cairn.EventType(c.Kind), Payload: []byte(c.ID)}
			}
			return out, nil
		})
		require.NoError(t, err)
		if n == 0 {
			return seen
		}
	}
}

// TestWebhookOutbox: every committed change of a workspace or artifact row
// is in the outbox, in order, and none that was rolled back; a build that
// fails leaves the rows for the next try; two dispatchers never take one
// row twice.
func TestWebhookOutbox(t *testing.T) {
	t.Parallel()
	db, ws, _ := setupWorkspace(t)
	ctx := t.Context()
	a := newArtifact(ws, "report", cairn.Now())
	require.NoError(t, db.InsertArtifact(ctx, a))
	boom := errors.New("rolled back")
	require.ErrorIs(t, db.WithTx(ctx, func(tx service.Store) error {
		require.NoError(t, tx.InsertWorkspace(ctx, newWorkspace("never", cairn.Now())))
		return boom
	}), boom)

	_, err := db.DispatchOutbox(ctx, 100, func(context.Context, []service.Change) ([]webhook.NewDelivery, error) {
		return nil, boom
	})
	require.Error(t, err)
	got := takeAll(t, db)
	require.Len(t, got, 3, "the workspace, the artifact, and the count the artifact moved: %+v", got)
	require.Equal(t, service.Change{Kind: "workspace", Op: "INSERT", ID: ws.ID, WorkspaceID: ws.ID}, got[0])
	require.Equal(t, service.Change{Kind: "artifact", Op: "INSERT", ID: a.ID, WorkspaceID: ws.ID}, got[1])
	require.Equal(t, service.Change{Kind: "workspace", Op: "UPDATE", ID: ws.ID, WorkspaceID: ws.ID}, got[2])
	require.Empty(t, takeAll(t, db), "taken once")

	t.Run("ConcurrentDispatchersTakeEachRowOnce", func(t *testing.T) {
		for i := range 300 {
			require.NoError(t, db.InsertWorkspace(ctx, newWorkspace("many-"+string(rune('a'+i%26))+ulid.Make().String()[20:], cairn.Now())))
		}
		var mu sync.Mutex
		ids := map[string]int{}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for _, c := range takeAll(t, db) {
					mu.Lock()
					ids[c.ID]++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, ids, 300)
		for id, n := range ids {
			require.Equal(t, 1, n, id)
		}
	})
}

// TestWebhookLeases: a leased delivery is not leased again until its lease
// lapses; an attempt's outcome is recorded only by the attempt that holds
// it; the listing pages newest first.
func TestWebhookLeases(t *testing.T) {
	t.Parallel()
	db, _ := setup(t)
	ctx := t.Context()
	require.NoError(t, db.InsertWorkspace(ctx, newWorkspace("ws", cairn.Now())))
	takeAll(t, db)

	leased, err := db.LeaseDeliveries(ctx, 16, time.Minute)
	require.NoError(t, err)
	require.Len(t, leased, 1)
	require.Equal(t, 1, leased[0].Attempts)
	again, err := db.LeaseDeliveries(ctx, 16, time.Minute)
	require.NoError(t, err)
	require.Empty(t, again, "held by its lease")

	status := 500
	why := "the receiver answered 500"
	require.NoError(t, db.FinishAttempt(ctx, leased[0], webhook.Outcome{Status: &status, Error: &why, RetryAt: time.Now().Add(-time.Second)}))
	retry, err := db.LeaseDeliveries(ctx, 16, time.Millisecond)
	require.NoError(t, err)
	require.Len(t, retry, 1, "due again")
	require.Equal(t, 2, retry[0].Attempts)
	require.NoError(t, db.FinishAttempt(ctx, leased[0], webhook.Outcome{Delivered: true}), "a stale attempt")
	page, err := db.ListDeliveries(ctx, cairn.DeliveryFilter{Limit: 10})
	require.NoError(t, err)
	require.Equal(t, cairn.DeliveryPending, page.Deliveries[0].State, "the stale attempt recorded nothing")
	require.Equal(t, why, *page.Deliveries[0].LastError)

	ok := 200
	require.NoError(t, db.FinishAttempt(ctx, retry[0], webhook.Outcome{Delivered: true, Status: &ok}))
	page, err = db.ListDeliveries(ctx, cairn.DeliveryFilter{Limit: 10})
	require.NoError(t, err)
	d := page.Deliveries[0]
	require.Equal(t, cairn.DeliveryDelivered, d.State)
	require.Equal(t, 2, d.Attempts)
	require.Nil(t, d.NextAt)
	require.NotNil(t, d.FinishedAt)
	n, err := db.PruneDeliveries(ctx, time.Hour, time.Hour, 10)
	require.NoError(t, err)
	require.Zero(t, n, "kept for its retention")

	for i := range 3 {
		require.NoError(t, db.InsertWorkspace(ctx, newWorkspace("page-"+string(rune('a'+i)), cairn.Now())))
	}
	takeAll(t, db)
	first, err := db.ListDeliveries(ctx, cairn.DeliveryFilter{Limit: 2})
	require.NoError(t, err)
	require.Len(t, first.Deliveries, 2)
	require.NotEmpty(t, first.NextAfter)
	rest, err := db.ListDeliveries(ctx, cairn.DeliveryFilter{Limit: 10, After: first.NextAfter})
	require.NoError(t, err)
	require.Len(t, rest.Deliveries, 2)
	require.Greater(t, first.Deliveries[1].ID, rest.Deliveries[0].ID, "newest first")
	require.Empty(t, rest.NextAfter)
}
