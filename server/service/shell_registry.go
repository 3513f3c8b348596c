package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn/ptyshell"
)

// ShellRow is one live v2 shell in the registry that every replica shares
// (the shells table): the server that opened it holds nothing of it, so any
// replica lists, attaches to, watches and ends it. A row lives from the
// create's checks until the shell's end is recorded; the audit log keeps
// its history.
type ShellRow struct {
	ID          string
	WorkspaceID string
	// Container is the container's name (<appName>.shell.<workspaceID>.<ID>).
	Container string
	// Key is the SHA-256 of the shell's resume secret: an attach's secret
	// is checked against it, and a server proves itself to the shell's
	// holder with an HMAC keyed by it.
	Key        []byte
	TokenName  string // who opened it; "" without authentication
	ClientAddr string // the opener's address
	Instance   string // shell.instanceName of the server that opened it
	Record     bool   // the holder records the session
	State      ShellState
	CreatedAt  time.Time
	ExpiresAt  time.Time // created + the maximum lifetime
}

// ShellState is where a registry row is in its shell's life.
type ShellState string

const (
	// ShellOpening: the row is written before the container exists, so a
	// container never runs without its row; a row still opening after the
	// open timeout is a create that died.
	ShellOpening ShellState = "opening"
	// ShellRunning: the container runs the shell; it can be attached.
	ShellRunning ShellState = "running"
	// ShellEnding: one replica claimed the shell's end (its recording and
	// SHELL_CLOSED row); no other takes it.
	ShellEnding ShellState = "ending"
)

// ShellStore is the shells registry in the metadata database.
type ShellStore interface {
	// InsertShell inserts a row (its State is written as given).
	InsertShell(ctx context.Context, row *ShellRow) error
	// FindShell reads a row. Reasons: shell_not_found.
	FindShell(ctx context.Context, id string) (*ShellRow, error)
	// FindShellRows lists the rows, of one workspace when workspaceID is set,
	// in (created_at, id) order, at most MaxShellRows of them.
	FindShellRows(ctx context.Context, workspaceID string) ([]*ShellRow, error)
	// CountShells counts the rows opened by instance: all of them, and
	// those of workspaceID.
	CountShells(ctx context.Context, instance, workspaceID string) (total, inWorkspace int, err error)
	// SetShellState moves a row from one of the states in from to state;
	// ok is false when the row is absent or in none of them (another
	// replica moved it first).
	SetShellState(ctx context.Context, id string, from []ShellState, state ShellState) (ok bool, err error)
	// DeleteShell deletes a row; an absent one is no error.
	DeleteShell(ctx context.Context, id string) error
	// FindShellEnd reads how the shell ended, from its SHELL_CLOSED audit
	// row; nil when none is recorded.
	FindShellEnd(ctx context.Context, id string) (*ShellEnd, error)
}

// ShellEnd is how a shell ended, as its SHELL_CLOSED row records it.
type ShellEnd struct {
	Reason   ptyshell.Reason
	ExitCode int
}

// MaxShellRows bounds one listing of the registry: far above the caps
// (shell.limits.maxSessions per replica), so it only guards memory.
const MaxShellRows = 10_000
