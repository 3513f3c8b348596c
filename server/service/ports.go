package service

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
)

// Store is the metadata database. Methods return *cairn.Error values for
// the outcomes callers branch on (not found, name taken); anything else is
// an internal failure.
type Store interface {
	// WithTx runs fn in one transaction on a Store bound to it. fn's error
	// rolls it back; a nested call is a savepoint.
	WithTx(ctx context.Context, fn func(Store) error) error

	// Ping answers whether the database serves queries.
	Ping(ctx context.Context) error

	// InsertWorkspace inserts a row. Reasons: name_taken.
	InsertWorkspace(ctx context.Context, ws *cairn.Workspace) error
	// FindWorkspace reads a row. Reasons: workspace_not_found.
	FindWorkspace(ctx context.Context, id string) (*cairn.Workspace, error)
	// LockWorkspaceRow reads a row and locks it until the transaction ends.
	// Reasons: workspace_not_found.
	LockWorkspaceRow(ctx context.Context, id string) (*cairn.Workspace, error)
	// FindWorkspaces lists rows in (created_at, id) order. With no limit it
	// returns at most MaxUnpagedListLength+1 rows so the caller can refuse.
	FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	// UpdateWorkspace writes every mutable column of ws.
	// Reasons: workspace_not_found, name_taken.
	UpdateWorkspace(ctx context.Context, ws *cairn.Workspace) error
	// DeleteWorkspace deletes a row; its artifact rows cascade, and their
	// object keys are recorded as released at the given time.
	// Reasons: workspace_not_found.
	DeleteWorkspace(ctx context.Context, id string, releasedAt time.Time) error

	// InsertAudit records one audit event.
	InsertAudit(ctx context.Context, ev *cairn.AuditEvent) error

	// LockWorkspace takes the workspace's advisory lock, shared or exclusive,
	// waiting until ctx is done. The lock outlives transactions; release it
	// with the returned function. Reasons: workspace_busy.
	LockWorkspace(ctx context.Context, id string, mode LockMode) (release func(), err error)
}

// LockMode selects how a workspace lock is held: transfers share it, volume
// setup and teardown and workspace delete take it exclusively.
type LockMode int

const (
	LockShared LockMode = iota
	LockExclusive
)

// Runtime is the container engine holding workspace volumes and running
// sidecars. Failures of the engine itself are docker_unavailable.
type Runtime interface {
	// Ping answers whether the engine is reachable.
	Ping(ctx context.Context) error
	// VolumeExists inspects one volume.
	VolumeExists(ctx context.Context, name string) (bool, error)
	// CreateVolume creates a local volume with the given labels.
	CreateVolume(ctx context.Context, name string, labels map[string]string) error
	// RemoveVolume removes a volume without force; an absent volume is not an
	// error. Reasons: volume_in_use, docker_unavailable.
	RemoveVolume(ctx context.Context, name string) error
	// MountCount counts the running containers that mount the volume.
	MountCount(ctx context.Context, volume string) (int, error)
	// RunSidecar runs one sidecar container to completion and always removes
	// it. Reasons: docker_unavailable, sidecar_busy, sidecar_timeout.
	RunSidecar(ctx context.Context, spec SidecarSpec) (*SidecarRun, error)
}

// SidecarSpec describes one sidecar run; the runtime adds the hardened
// posture (API.md §8.6).
type SidecarSpec struct {
	Command     string            // prep, stat, upload, download
	Role        string            // name part: volume-prep, cairn-stat, …
	Subject     string            // workspace or artifact ID, for the name
	WorkspaceID string            // for the cairn.workspace label
	VolumeName  string            // mounted at cairn.MountPath
	Env         map[string]string // CAIRN_* input
	Transfer    bool              // transfer network mode and extras; else network none
}

// SidecarRun is what a finished sidecar left behind.
type SidecarRun struct {
	ExitCode int
	Output   []byte // stdout and stderr, merged by the TTY
}
