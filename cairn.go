// Package cairn is the domain vocabulary of cairn: workspaces, artifacts and
// audit events, their states and validation, the Error type with its stable
// reasons, and the service interfaces that every front door (REST, MCP, the
// CLI, the TUI) calls. It imports only the standard library.
package cairn

import "time"

// MountPath is where every container that uses a workspace mounts its volume:
// tool containers, cairn sidecars and shell containers alike. Paths inside a
// workspace are therefore used verbatim by every party.
const MountPath = "/mnt/cairn/ws"

// Now returns the current time as cairn stores it: UTC at microsecond
// precision, the precision Postgres keeps, so that a value returned by a
// create call equals the value read back later.
func Now() time.Time { return Timestamp(time.Now()) }

// Timestamp normalises t to UTC at microsecond precision.
func Timestamp(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }
