// Package postgres is the pgx/v5 adapter of service.Store: plain SQL, one
// file per table family, errors translated at the boundary.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.Store = (*DB)(nil)

// querier is what both the pool and a transaction offer, so the same query
// code runs inside and outside transactions.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Pool sizes. Queries share one pool; sessions held for a long time — the
// advisory locks kept across sidecar runs and reconciliation passes — come
// from a second one, so that however many are held, queries never starve
// (a transfer holding its lock still needs a connection for its queries).
const (
	queryConns = 16
	heldConns  = 64
)

// DB is the cairn metadata store.
type DB struct {
	pool *pgxpool.Pool // queries and transactions
	held *pgxpool.Pool // long-held sessions: locks, the reconciler's key table
	q    querier
}

// Open connects the pools to the database named by dsn and checks it
// answers.
func Open(ctx context.Context, dsn string) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse database settings: %w", err)
	}
	heldCfg := cfg.Copy()
	cfg.MaxConns = max(cfg.MaxConns, queryConns)
	heldCfg.MaxConns, heldCfg.MinConns = heldConns, 0
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database %s on %s: %w", cfg.ConnConfig.Database, hosts(cfg.ConnConfig), err)
	}
	held, err := pgxpool.NewWithConfig(ctx, heldCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database pool: %w", err)
	}
	return &DB{pool: pool, held: held, q: pool}, nil
}

// hosts names the servers a connection may go to, the first and its
// fallbacks (several with a multi-host URL).
func hosts(cfg *pgx.ConnConfig) string {
	names := []string{net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))}
	for _, f := range cfg.Fallbacks {
		if name := net.JoinHostPort(f.Host, strconv.Itoa(int(f.Port))); !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// Close closes every connection.
func (db *DB) Close() {
	db.held.Close()
	db.pool.Close()
}

// Ping runs SELECT 1.
func (db *DB) Ping(ctx context.Context) error {
	var one int
	if err := db.q.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return fmt.Errorf("select 1: %w", err)
	}
	return nil
}

// WithTx runs fn in a transaction; inside one, pgx turns Begin into a
// savepoint.
func (db *DB) WithTx(ctx context.Context, fn func(service.Store) error) error {
	tx, err := db.q.Begin(ctx)
	if err != nil {
		return internal("begin transaction", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // a no-op after Commit
	if err := fn(&DB{pool: db.pool, held: db.held, q: tx}); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return internal("commit transaction", err)
	}
	return nil
}

// internal hides a database failure behind the detail the API promises. An
// outage — the server refusing or dropping connections, or none to be had
// in time — is database_unavailable, so a client can tell it from a bug; a
// failing query stays internal.
func internal(what string, err error) error {
	cause := fmt.Errorf("%s: %w", what, err)
	if unreachable(err) {
		return &cairn.Error{Reason: cairn.ReasonDatabaseUnavailable, Detail: "the database is unavailable", Err: cause}
	}
	return cairn.Internal("database error", cause)
}

// unreachable reports a failure to reach the database rather than of the
// query. A cancelled context is the caller going away, not an outage.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) {
		return false
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03", "53300": // shutting down, crashed, starting, too many connections
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08") // connection exceptions
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded) || pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// isUniqueViolation reports a unique-constraint failure.
func isUniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}
