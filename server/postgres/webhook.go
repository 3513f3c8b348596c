package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/server/service/webhook"
)

var _ webhook.Store = (*DB)(nil)

// DispatchOutbox takes up to max outbox rows no other server holds, turns
// them into deliveries with build and deletes them, in one transaction:
// a row is made into deliveries once, or stays for the next try.
func (db *DB) DispatchOutbox(ctx context.Context, max int, build webhook.Build) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `DELETE FROM webhook_outbox WHERE seq IN
			(SELECT seq FROM webhook_outbox ORDER BY seq LIMIT $1 FOR UPDATE SKIP LOCKED)
			RETURNING seq, kind, op, id, workspace_id, at`, max)
		if err != nil {
			return err
		}
		type taken struct {
			seq int64
			at  time.Time
			c   service.Change
		}
		list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (taken, error) {
			var t taken
			return t, row.Scan(&t.seq, &t.c.Kind, &t.c.Op, &t.c.ID, &t.c.WorkspaceID, &t.at)
		})
		if err != nil || len(list) == 0 {
			return err
		}
		// DELETE … RETURNING keeps no order: the outbox's is the changes'.
		changes := make([]service.Change, len(list))
		slices.SortFunc(list, func(a, b taken) int { return cmp.Compare(a.seq, b.seq) })
		for i, t := range list {
			changes[i] = t.c
		}
		made, err := build(ctx, changes)
		if err != nil {
			return err
		}
		for _, d := range made {
			if _, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, webhook, event_type, payload, state, next_at)
				VALUES ($1, $2, $3, $4, $5, now())`, d.ID, d.Webhook, d.EventType, d.Payload, cairn.DeliveryPending); err != nil {
				return err
			}
		}
		n = len(list)
		return nil
	})
	if err != nil {
		return 0, internal("dispatch the webhook outbox", err)
	}
	return n, nil
}

// PendingDeliveries counts each webhook's deliveries not yet finished.
func (db *DB) PendingDeliveries(ctx context.Context) (map[string]int, error) {
	rows, err := db.q.Query(ctx, `SELECT webhook, count(*) FROM webhook_deliveries WHERE state = $1 GROUP BY webhook`,
		cairn.DeliveryPending)
	if err != nil {
		return nil, internal("count pending deliveries", err)
	}
	counts := map[string]int{}
	var name string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error { counts[name] = n; return nil })
	if err != nil {
		return nil, internal("count pending deliveries", err)
	}
	return counts, nil
}

// LeaseDeliveries takes up to max deliveries that are due, counts the
// attempt and moves their next_at lease ahead: until it lapses no other
// sender takes them.
func (db *DB) LeaseDeliveries(ctx context.Context, max int, lease time.Duration) ([]webhook.Leased, error) {
	rows, err := db.q.Query(ctx, `UPDATE webhook_deliveries SET attempts = attempts + 1,
			next_at = now() + make_interval(secs => $2)
		WHERE id IN (SELECT id FROM webhook_deliveries WHERE state = $3 AND next_at <= now()
			ORDER BY next_at LIMIT $1 FOR UPDATE SKIP LOCKED)
		RETURNING id, webhook, event_type, payload, attempts`, max, lease.Seconds(), cairn.DeliveryPending)
	if err != nil {
		return nil, internal("lease webhook deliveries", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (webhook.Leased, error) {
		var l webhook.Leased
		return l, row.Scan(&l.ID, &l.Webhook, &l.EventType, &l.Payload, &l.Attempts)
	})
	if err != nil {
		return nil, internal("lease webhook deliveries", err)
	}
	return list, nil
}

// FinishAttempt records an attempt's outcome: delivered, failed for good,
// or due again at o.RetryAt. Only the attempt that holds the lease
// (attempts unchanged) records it.
func (db *DB) FinishAttempt(ctx context.Context, l webhook.Leased, o webhook.Outcome) error {
	state, next := cairn.DeliveryPending, o.RetryAt
	switch {
	case o.Delivered:
		state = cairn.DeliveryDelivered
	case o.RetryAt.IsZero():
		state = cairn.DeliveryFailed
	}
	_, err := db.q.Exec(ctx, `UPDATE webhook_deliveries SET state = $3, last_status = $4, last_error = $5,
			next_at = CASE WHEN $3 = 'PENDING' THEN $6 ELSE next_at END,
			finished_at = CASE WHEN $3 = 'PENDING' THEN NULL ELSE now() END
		WHERE id = $1 AND attempts = $2 AND state = 'PENDING'`,
		l.ID, l.Attempts, state, o.Status, o.Error, next)
	if err != nil {
		return internal("record a webhook attempt", err)
	}
	return nil
}

// PruneDeliveries deletes up to max finished deliveries older than
// their retention.
func (db *DB) PruneDeliveries(ctx context.Context, delivered, failed time.Duration, max int) (int, error) {
	tag, err := db.q.Exec(ctx, `DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
		WHERE (state = $1 AND finished_at < now() - make_interval(secs => $2))
		   OR (state = $3 AND finished_at < now() - make_interval(secs => $4)) LIMIT $5)`,
		cairn.DeliveryDelivered, delivered.Seconds(), cairn.DeliveryFailed, failed.Seconds(), max)
	if err != nil {
		return 0, internal("prune webhook deliveries", err)
	}
	return int(tag.RowsAffected()), nil
}

const deliveryColumns = `id, webhook, event_type, state, attempts, next_at, last_status, last_error,
	created_at, finished_at`

func scanDelivery(row pgx.CollectableRow) (cairn.WebhookDelivery, error) {
	var d cairn.WebhookDelivery
	var next time.Time
	err := row.Scan(&d.ID, &d.Webhook, &d.EventType, &d.State, &d.Attempts, &next, &d.LastStatus, &d.LastError,
		&d.CreatedAt, &d.FinishedAt)
	if d.State == cairn.DeliveryPending {
		next = next.UTC()
		d.NextAt = &next
	}
	d.CreatedAt = d.CreatedAt.UTC()
	if d.FinishedAt != nil {
		*d.FinishedAt = d.FinishedAt.UTC()
	}
	return d, err
}

// ListDeliveries pages through deliveries, newest first.
func (db *DB) ListDeliveries(ctx context.Context, f cairn.DeliveryFilter) (*cairn.DeliveryPage, error) {
	rows, err := db.q.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE ($1 = '' OR webhook = $1) AND ($2 = '' OR state = $2) AND ($3 = '' OR id < $3)
		ORDER BY id DESC LIMIT $4`, f.Webhook, f.State, f.After, f.Limit+1)
	if err != nil {
		return nil, internal("list webhook deliveries", err)
	}
	list, err := pgx.CollectRows(rows, scanDelivery)
	if err != nil {
		return nil, internal("list webhook deliveries", err)
	}
	page := &cairn.DeliveryPage{Deliveries: list}
	if len(list) > f.Limit {
		page.Deliveries = list[:f.Limit]
		page.NextAfter = list[f.Limit-1].ID
	}
	if page.Deliveries == nil {
		page.Deliveries = []cairn.WebhookDelivery{}
	}
	return page, nil
}

// RetryDelivery makes a FAILED delivery PENDING again, due now, with its
// attempts at 0, and writes the audit row, in one transaction. Reasons:
// delivery_not_found, delivery_not_failed.
func (db *DB) RetryDelivery(ctx context.Context, id string, audit *cairn.AuditEvent) (*cairn.WebhookDelivery, error) {
	var state string
	var d cairn.WebhookDelivery
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `SELECT state FROM webhook_deliveries WHERE id = $1 FOR UPDATE`, id).Scan(&state)
		if err != nil || state != cairn.DeliveryFailed {
			return err
		}
		rows, err := tx.Query(ctx, `UPDATE webhook_deliveries SET state = $2, attempts = 0, next_at = now(),
				finished_at = NULL WHERE id = $1 RETURNING `+deliveryColumns, id, cairn.DeliveryPending)
		if err != nil {
			return err
		}
		if d, err = pgx.CollectExactlyOneRow(rows, scanDelivery); err != nil {
			return err
		}
		return (&DB{pool: db.pool, held: db.held, q: tx}).InsertAudit(ctx, audit)
	})
	_, stated := errors.AsType[*cairn.Error](err) // the audit row's, already stated
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, cairn.Errorf(cairn.ReasonDeliveryNotFound, "no webhook delivery has the ID %q", id)
	case stated:
		return nil, err
	case err != nil:
		return nil, internal("retry a webhook delivery", err)
	case state != cairn.DeliveryFailed:
		return nil, cairn.Errorf(cairn.ReasonDeliveryNotFailed, "delivery %s is %s; only a FAILED one is sent again", id, state)
	}
	return &d, nil
}
