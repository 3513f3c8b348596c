package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn/server/service"
)

// ClaimKey makes the caller the first request of (actor, key): a new row,
// or one whose first request's lease lapsed unanswered, or one past
// retention. Otherwise it returns the row as it is. Each claim also deletes
// a few rows past retention, so the table holds about a day of keys.
func (db *DB) ClaimKey(ctx context.Context, k service.KeyClaim) (bool, *service.KeyedAnswer, error) {
	retention := service.KeyRetention.Seconds()
	_, err := db.q.Exec(ctx, `DELETE FROM idempotency_keys WHERE ctid IN (SELECT ctid FROM idempotency_keys
		WHERE created_at < now() - make_interval(secs => $1) LIMIT 16)`, retention)
	if err != nil {
		return false, nil, internal("expire idempotency keys", err)
	}
	tag, err := db.q.Exec(ctx, `INSERT INTO idempotency_keys (actor, key, fingerprint, lease_until)
		VALUES ($1, $2, $3, now() + make_interval(secs => $4))
		ON CONFLICT (actor, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = NULL, answer = NULL,
			lease_until = EXCLUDED.lease_until, created_at = now()
		WHERE (idempotency_keys.status IS NULL AND idempotency_keys.lease_until < now())
			OR idempotency_keys.created_at < now() - make_interval(secs => $5)`,
		k.Actor, k.Key, k.Fingerprint, k.Lease.Seconds(), retention)
	if err != nil {
		return false, nil, internal("claim an idempotency key", err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil, nil
	}
	var a service.KeyedAnswer
	var status *int
	err = db.q.QueryRow(ctx, `SELECT fingerprint, status, answer FROM idempotency_keys WHERE actor = $1 AND key = $2`,
		k.Actor, k.Key).Scan(&a.Fingerprint, &status, &a.Body)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, &service.KeyedAnswer{}, nil // deleted meanwhile: the caller claims again
	}
	if err != nil {
		return false, nil, internal("read an idempotency key", err)
	}
	if status != nil {
		a.Status, a.Done = *status, true
	}
	return false, &a, nil
}

// CompleteKey keeps the first request's answer.
func (db *DB) CompleteKey(ctx context.Context, k service.KeyClaim, a service.KeyedAnswer) error {
	_, err := db.q.Exec(ctx, `UPDATE idempotency_keys SET status = $3, answer = $4
		WHERE actor = $1 AND key = $2 AND fingerprint = $5 AND status IS NULL`, k.Actor, k.Key, a.Status, a.Body, k.Fingerprint)
	if err != nil {
		return internal("keep an idempotency key's answer", err)
	}
	return nil
}

// ReleaseKey gives up an unanswered claim, so that a repeat runs afresh.
func (db *DB) ReleaseKey(ctx context.Context, k service.KeyClaim) error {
	_, err := db.q.Exec(ctx, `DELETE FROM idempotency_keys WHERE actor = $1 AND key = $2 AND fingerprint = $3
		AND status IS NULL`, k.Actor, k.Key, k.Fingerprint)
	if err != nil {
		return internal("release an idempotency key", err)
	}
	return nil
}
