package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/service"
)

// TestIdempotencyKeys: the first claim of a key wins and a second waits on
// it; a kept answer is returned to every later claim; a released claim and
// a lapsed lease are claimed afresh; keys are the actor's own; rows past
// retention are taken over.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	db, dsn := setup(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	k := service.KeyClaim{Actor: "ops", Key: "k-1", Fingerprint: "fp-a", Lease: time.Minute}

	claimed, _, err := db.ClaimKey(ctx, k)
	require.NoError(t, err)
	require.True(t, claimed)
	claimed, prior, err := db.ClaimKey(ctx, k)
	require.NoError(t, err)
	require.False(t, claimed)
	require.Equal(t, service.KeyedAnswer{Fingerprint: "fp-a"}, *prior, "running: no answer yet")

	other := k
	other.Actor = "ci"
	claimed, _, err = db.ClaimKey(ctx, other)
	require.NoError(t, err)
	require.True(t, claimed, "another token's key of the same name is its own")

	require.NoError(t, db.CompleteKey(ctx, k, service.KeyedAnswer{Status: 200, Body: []byte(`{"ok":1}`)}))
	claimed, prior, err = db.ClaimKey(ctx, k)
	require.NoError(t, err)
	require.False(t, claimed)
	require.Equal(t, service.KeyedAnswer{Fingerprint: "fp-a", Done: true, Status: 200, Body: []byte(`{"ok":1}`)}, *prior)

	t.Run("Released", func(t *testing.T) {
		r := service.KeyClaim{Actor: "ops", Key: "k-released", Fingerprint: "fp", Lease: time.Minute}
		claimed, _, err := db.ClaimKey(ctx, r)
		require.NoError(t, err)
		require.True(t, claimed)
		require.NoError(t, db.ReleaseKey(ctx, r))
		claimed, _, err = db.ClaimKey(ctx, r)
		require.NoError(t, err)
		require.True(t, claimed)
	})
	t.Run("LeaseLapsed", func(t *testing.T) {
		l := service.KeyClaim{Actor: "ops", Key: "k-lapsed", Fingerprint: "fp-1", Lease: time.Minute}
		claimed, _, err := db.ClaimKey(ctx, l)
		require.NoError(t, err)
		require.True(t, claimed)
		_, err = conn.Exec(ctx, `UPDATE idempotency_keys SET lease_until = now() - interval '1 second' WHERE key = 'k-lapsed'`)
		require.NoError(t, err)
		l.Fingerprint = "fp-2"
		claimed, _, err = db.ClaimKey(ctx, l)
		require.NoError(t, err)
		require.True(t, claimed, "a first request whose lease lapsed unanswered is taken over")
		require.NoError(t, db.CompleteKey(ctx, service.KeyClaim{Actor: "ops", Key: "k-lapsed", Fingerprint: "fp-1"},
			service.KeyedAnswer{Status: 200}), "the lapsed request's late answer is dropped")
		_, prior, err := db.ClaimKey(ctx, l)
		require.NoError(t, err)
		require.False(t, prior.Done, "the late answer did not land over the new claim")
	})
	t.Run("PastRetention", func(t *testing.T) {
		_, err = conn.Exec(ctx, `UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE key = 'k-1' AND actor = 'ops'`)
		require.NoError(t, err)
		claimed, _, err := db.ClaimKey(ctx, k)
		require.NoError(t, err)
		require.True(t, claimed, "a kept answer past retention is gone")
	})
}
