package postgres

import (
	"context"
	"errors"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// lockKey is the 64-bit advisory-lock key of a name, e.g.
// "cairn.ws:<workspace id>". FNV-1a keeps it stable across processes and
// releases.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// LockWorkspace takes the workspace's advisory lock on a dedicated pooled
// connection, because the lock is held across sidecar runs that outlast any
// transaction.
func (db *DB) LockWorkspace(ctx context.Context, id string, mode service.LockMode) (func(), error) {
	conn, err := db.held.Acquire(ctx)
	if err != nil {
		return nil, busyOr(ctx, "acquire lock connection", err)
	}
	key := lockKey("cairn.ws:" + id)
	lock, unlock := "SELECT pg_advisory_lock_shared($1)", "SELECT pg_advisory_unlock_shared($1)"
	if mode == service.LockExclusive {
		lock, unlock = "SELECT pg_advisory_lock($1)", unlockExclusive
	}
	if _, err := conn.Exec(ctx, lock, key); err != nil {
		// An interrupted wait may still have been granted at the last moment.
		discard(ctx, conn)
		return nil, busyOr(ctx, "take workspace lock", err)
	}
	return func() { unlockAndRelease(ctx, conn, unlock, key) }, nil
}

// busyOr reports a wait cut short by the request deadline as workspace_busy,
// anything else as a database failure.
func busyOr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return &cairn.Error{Reason: cairn.ReasonWorkspaceBusy,
			Detail: "the workspace is busy with another volume operation; try again later", Err: err}
	}
	return internal(what, err)
}

// TryLockWorkspace takes the workspace's lock exclusively without waiting.
func (db *DB) TryLockWorkspace(ctx context.Context, id string) (func(), bool, error) {
	conn, err := db.held.Acquire(ctx)
	if err != nil {
		return nil, false, internal("acquire lock connection", err)
	}
	key := lockKey("cairn.ws:" + id)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		discard(ctx, conn)
		return nil, false, internal("try workspace lock", err)
	}
	if !ok {
		conn.Release()
		return nil, false, nil
	}
	return func() { unlockAndRelease(ctx, conn, unlockExclusive, key) }, true, nil
}

// unlockExclusive releases an exclusive session-level advisory lock.
const unlockExclusive = "SELECT pg_advisory_unlock($1)"

// unlockAndRelease drops an advisory lock with the unlock statement and
// returns its connection to the pool. Unlocking explicitly matters: a closed
// session's locks go only once its backend exits, and a successor trying at
// once must find them free. A connection that cannot unlock is closed.
func unlockAndRelease(ctx context.Context, conn *pgxpool.Conn, unlock string, key int64) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(cctx, unlock, key); err != nil {
		conn.Conn().Close(cctx) //nolint:errcheck // the session's end releases the lock
	}
	conn.Release()
}

// discard closes a connection in doubt (a lock wait or query cut short) and
// hands it back to the pool, which drops it; closing also drops any lock it
// holds.
func discard(ctx context.Context, conn *pgxpool.Conn) {
	conn.Conn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is dropped either way
	conn.Release()
}
