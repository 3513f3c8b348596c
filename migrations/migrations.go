// Package migrations holds cairn's schema as embedded SQL files, applied in
// order by tern (see server/postgres.Migrate).
package migrations

import "embed"

// FS holds the numbered migration files.
//
//go:embed *.sql
var FS embed.FS
