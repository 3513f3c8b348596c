package service

import (
	"context"
	"time"
)

// ExecRow is one live exec in the registry every replica shares (the execs
// table), from its open's checks until its end is recorded. It is how a
// replica finds the execs of a server that died: their containers would
// run their commands on, unseen, until they expire.
type ExecRow struct {
	ID          string
	WorkspaceID string
	Container   string // <appName>.exec.<workspaceID>.<ID>
	TokenName   string // who opened it; "" without authentication
	ClientAddr  string
	Instance    string // shell.instanceName of the server serving it
	Process     string // that server process's ID, new at every start
	Argv0       string
	Started     bool      // its EXEC_STARTED row was written
	CreatedAt   time.Time // by the database's clock; set by InsertExec
}

// ExecStore is the execs registry and the servers' liveness in the
// metadata database.
type ExecStore interface {
	// InsertExec inserts a row, not started, created now by the database's
	// clock. Reasons: workspace_not_found.
	InsertExec(ctx context.Context, row *ExecRow) error
	// SetExecStarted marks a row started.
	SetExecStarted(ctx context.Context, id string) error
	// DeleteExec deletes a row; deleted is false when it was absent (another
	// replica claimed it first).
	DeleteExec(ctx context.Context, id string) (deleted bool, err error)
	// FindExecRows lists the rows of instance, at most MaxShellRows.
	FindExecRows(ctx context.Context, instance string) ([]*ExecRow, error)
	// LostExecRows lists the rows created more than minAge ago whose
	// instance is not live, at most MaxShellRows.
	LostExecRows(ctx context.Context, minAge time.Duration) ([]*ExecRow, error)
	// RenewInstance marks instance live for ttl from the database's clock.
	RenewInstance(ctx context.Context, instance string, ttl time.Duration) error
}

// instanceTTL is how long a server counts as live after its reaper's pass:
// three passes, so one slow pass or a database blip does not make its
// execs look lost.
func (c SessionConfig) instanceTTL() time.Duration { return 3 * c.ReapInterval }
