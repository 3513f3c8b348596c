package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/tern/v2/migrate"

	"github.com/cairn-dev/cairn/migrations"
)

// versionTable is where tern records the applied schema version.
const versionTable = "cairn_schema_version"

// Migrate applies every embedded migration not yet applied to the database
// named by dsn. It is idempotent, and concurrent migrators serialise on
// tern's advisory lock.
func Migrate(ctx context.Context, dsn string) (int32, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return 0, fmt.Errorf("connect to migrate: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))

	m, err := migrate.NewMigrator(ctx, conn, versionTable)
	if err != nil {
		return 0, fmt.Errorf("prepare migrator: %w", err)
	}
	if err := m.LoadMigrations(migrations.FS); err != nil {
		return 0, fmt.Errorf("load migrations: %w", err)
	}
	if err := m.Migrate(ctx); err != nil {
		return 0, fmt.Errorf("migrate: %w", err)
	}
	return m.GetCurrentVersion(ctx)
}
