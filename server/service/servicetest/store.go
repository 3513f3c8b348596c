package servicetest

import (
	"context"
	"time"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

var _ service.Store = (*Store)(nil)

// Store is a fake service.Store.
type Store struct {
	// WithTxFunc, when nil, runs fn on the fake itself: a fake has no
	// transaction to open, and the methods fn calls still fail loudly if
	// unset.
	WithTxFunc func(ctx context.Context, fn func(service.Store) error) error

	PingFunc             func(ctx context.Context) error
	InsertWorkspaceFunc  func(ctx context.Context, ws *cairn.Workspace) error
	FindWorkspaceFunc    func(ctx context.Context, id string) (*cairn.Workspace, error)
	LockWorkspaceRowFunc func(ctx context.Context, id string) (*cairn.Workspace, error)
	LockArtifactRowsFunc func(ctx context.Context, workspaceID string) error
	FindWorkspacesFunc   func(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	UpdateWorkspaceFunc  func(ctx context.Context, ws *cairn.Workspace) error
	DeleteWorkspaceFunc  func(ctx context.Context, id string, releasedAt time.Time) error
	InsertAuditFunc      func(ctx context.Context, ev *cairn.AuditEvent) error
	LockWorkspaceFunc    func(ctx context.Context, id string, mode service.LockMode) (func(), error)
	TryLockWorkspaceFunc func(ctx context.Context, id string) (func(), bool, error)
	FindAuditEventsFunc  func(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error)

	InsertArtifactFunc    func(ctx context.Context, a *cairn.Artifact) error
	FindArtifactFunc      func(ctx context.Context, id string) (*cairn.Artifact, error)
	FlagMissingFunc       func(ctx context.Context, a *cairn.Artifact, at time.Time) (bool, error)
	LockArtifactRowFunc   func(ctx context.Context, id string) (*cairn.Artifact, error)
	FindArtifactsFunc     func(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error)
	ArtifactNameTakenFunc func(ctx context.Context, workspaceID, name string) (bool, error)
	UpdateArtifactFunc    func(ctx context.Context, a *cairn.Artifact) error
	DeleteArtifactFunc    func(ctx context.Context, id string) error
	ReleaseObjectFunc     func(ctx context.Context, key, workspaceID string, at time.Time) error
	ObjectKeyUsedFunc     func(ctx context.Context, key string) (bool, error)

	InsertShellFunc    func(ctx context.Context, row *service.ShellRow) error
	FindShellFunc      func(ctx context.Context, id string) (*service.ShellRow, error)
	FindShellRowsFunc  func(ctx context.Context, workspaceID string) ([]*service.ShellRow, error)
	CountShellsFunc    func(ctx context.Context, instance, workspaceID string) (int, int, error)
	SetShellStateFunc  func(ctx context.Context, id string, from []service.ShellState, state service.ShellState) (bool, error)
	DeleteShellFunc    func(ctx context.Context, id string) error
	FindShellEndFunc   func(ctx context.Context, id string) (*service.ShellEnd, error)
	InsertExecFunc     func(ctx context.Context, row *service.ExecRow) error
	SetExecStartedFunc func(ctx context.Context, id string) error
	DeleteExecFunc     func(ctx context.Context, id string) (bool, error)
	FindExecRowsFunc   func(ctx context.Context, instance string) ([]*service.ExecRow, error)
	LostExecRowsFunc   func(ctx context.Context, minAge time.Duration) ([]*service.ExecRow, error)
	RenewInstanceFunc  func(ctx context.Context, instance string, ttl time.Duration) error

	ClaimKeyFunc    func(ctx context.Context, k service.KeyClaim) (bool, *service.KeyedAnswer, error)
	CompleteKeyFunc func(ctx context.Context, k service.KeyClaim, a service.KeyedAnswer) error
	ReleaseKeyFunc  func(ctx context.Context, k service.KeyClaim) error
}

func (s *Store) ClaimKey(ctx context.Context, k service.KeyClaim) (bool, *service.KeyedAnswer, error) {
	if s.ClaimKeyFunc == nil {
		return false, nil, notSet("Store.ClaimKey")
	}
	return s.ClaimKeyFunc(ctx, k)
}

func (s *Store) CompleteKey(ctx context.Context, k service.KeyClaim, a service.KeyedAnswer) error {
	if s.CompleteKeyFunc == nil {
		return notSet("Store.CompleteKey")
	}
	return s.CompleteKeyFunc(ctx, k, a)
}

func (s *Store) ReleaseKey(ctx context.Context, k service.KeyClaim) error {
	if s.ReleaseKeyFunc == nil {
		return notSet("Store.ReleaseKey")
	}
	return s.ReleaseKeyFunc(ctx, k)
}

func (s *Store) WithTx(ctx context.Context, fn func(service.Store) error) error {
	if s.WithTxFunc == nil {
		return fn(s)
	}
	return s.WithTxFunc(ctx, fn)
}

func (s *Store) Ping(ctx context.Context) error {
	if s.PingFunc == nil {
		return notSet("Store.Ping")
	}
	return s.PingFunc(ctx)
}

func (s *Store) InsertWorkspace(ctx context.Context, ws *cairn.Workspace) error {
	if s.InsertWorkspaceFunc == nil {
		return notSet("Store.InsertWorkspace")
	}
	return s.InsertWorkspaceFunc(ctx, ws)
}

func (s *Store) FindWorkspace(ctx context.Context, id string) (*cairn.Workspace, error) {
	if s.FindWorkspaceFunc == nil {
		return nil, notSet("Store.FindWorkspace")
	}
	return s.FindWorkspaceFunc(ctx, id)
}

func (s *Store) LockArtifactRows(ctx context.Context, workspaceID string) error {
	if s.LockArtifactRowsFunc == nil {
		return notSet("Store.LockArtifactRows")
	}
	return s.LockArtifactRowsFunc(ctx, workspaceID)
}

func (s *Store) LockWorkspaceRow(ctx context.Context, id string) (*cairn.Workspace, error) {
	if s.LockWorkspaceRowFunc == nil {
		return nil, notSet("Store.LockWorkspaceRow")
	}
	return s.LockWorkspaceRowFunc(ctx, id)
}

func (s *Store) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error) {
	if s.FindWorkspacesFunc == nil {
		return nil, notSet("Store.FindWorkspaces")
	}
	return s.FindWorkspacesFunc(ctx, f)
}

func (s *Store) UpdateWorkspace(ctx context.Context, ws *cairn.Workspace) error {
	if s.UpdateWorkspaceFunc == nil {
		return notSet("Store.UpdateWorkspace")
	}
	return s.UpdateWorkspaceFunc(ctx, ws)
}

func (s *Store) DeleteWorkspace(ctx context.Context, id string, releasedAt time.Time) error {
	if s.DeleteWorkspaceFunc == nil {
		return notSet("Store.DeleteWorkspace")
	}
	return s.DeleteWorkspaceFunc(ctx, id, releasedAt)
}

func (s *Store) InsertAudit(ctx context.Context, ev *cairn.AuditEvent) error {
	if s.InsertAuditFunc == nil {
		return notSet("Store.InsertAudit")
	}
	return s.InsertAuditFunc(ctx, ev)
}

func (s *Store) LockWorkspace(ctx context.Context, id string, mode service.LockMode) (func(), error) {
	if s.LockWorkspaceFunc == nil {
		return nil, notSet("Store.LockWorkspace")
	}
	return s.LockWorkspaceFunc(ctx, id, mode)
}

func (s *Store) InsertArtifact(ctx context.Context, a *cairn.Artifact) error {
	if s.InsertArtifactFunc == nil {
		return notSet("Store.InsertArtifact")
	}
	return s.InsertArtifactFunc(ctx, a)
}

func (s *Store) FlagMissing(ctx context.Context, a *cairn.Artifact, at time.Time) (bool, error) {
	if s.FlagMissingFunc == nil {
		return false, notSet("Store.FlagMissing")
	}
	return s.FlagMissingFunc(ctx, a, at)
}

func (s *Store) FindArtifact(ctx context.Context, id string) (*cairn.Artifact, error) {
	if s.FindArtifactFunc == nil {
		return nil, notSet("Store.FindArtifact")
	}
	return s.FindArtifactFunc(ctx, id)
}

func (s *Store) LockArtifactRow(ctx context.Context, id string) (*cairn.Artifact, error) {
	if s.LockArtifactRowFunc == nil {
		return nil, notSet("Store.LockArtifactRow")
	}
	return s.LockArtifactRowFunc(ctx, id)
}

func (s *Store) FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) ([]*cairn.Artifact, error) {
	if s.FindArtifactsFunc == nil {
		return nil, notSet("Store.FindArtifacts")
	}
	return s.FindArtifactsFunc(ctx, f)
}

func (s *Store) ArtifactNameTaken(ctx context.Context, workspaceID, name string) (bool, error) {
	if s.ArtifactNameTakenFunc == nil {
		return false, notSet("Store.ArtifactNameTaken")
	}
	return s.ArtifactNameTakenFunc(ctx, workspaceID, name)
}

func (s *Store) UpdateArtifact(ctx context.Context, a *cairn.Artifact) error {
	if s.UpdateArtifactFunc == nil {
		return notSet("Store.UpdateArtifact")
	}
	return s.UpdateArtifactFunc(ctx, a)
}

func (s *Store) DeleteArtifact(ctx context.Context, id string) error {
	if s.DeleteArtifactFunc == nil {
		return notSet("Store.DeleteArtifact")
	}
	return s.DeleteArtifactFunc(ctx, id)
}

func (s *Store) ReleaseObject(ctx context.Context, key, workspaceID string, at time.Time) error {
	if s.ReleaseObjectFunc == nil {
		return notSet("Store.ReleaseObject")
	}
	return s.ReleaseObjectFunc(ctx, key, workspaceID, at)
}

func (s *Store) TryLockWorkspace(ctx context.Context, id string) (func(), bool, error) {
	if s.TryLockWorkspaceFunc == nil {
		return nil, false, notSet("Store.TryLockWorkspace")
	}
	return s.TryLockWorkspaceFunc(ctx, id)
}

func (s *Store) FindAuditEvents(ctx context.Context, f cairn.AuditFilter) ([]*cairn.AuditEvent, error) {
	if s.FindAuditEventsFunc == nil {
		return nil, notSet("Store.FindAuditEvents")
	}
	return s.FindAuditEventsFunc(ctx, f)
}

// ObjectKeyUsed answers false when no func is set: most tests register
// fresh keys.
func (s *Store) ObjectKeyUsed(ctx context.Context, key string) (bool, error) {
	if s.ObjectKeyUsedFunc == nil {
		return false, nil
	}
	return s.ObjectKeyUsedFunc(ctx, key)
}

func (s *Store) InsertShell(ctx context.Context, row *service.ShellRow) error {
	if s.InsertShellFunc == nil {
		return notSet("Store.InsertShell")
	}
	return s.InsertShellFunc(ctx, row)
}

func (s *Store) FindShell(ctx context.Context, id string) (*service.ShellRow, error) {
	if s.FindShellFunc == nil {
		return nil, notSet("Store.FindShell")
	}
	return s.FindShellFunc(ctx, id)
}

func (s *Store) FindShellRows(ctx context.Context, workspaceID string) ([]*service.ShellRow, error) {
	if s.FindShellRowsFunc == nil {
		return nil, notSet("Store.FindShellRows")
	}
	return s.FindShellRowsFunc(ctx, workspaceID)
}

func (s *Store) CountShells(ctx context.Context, instance, workspaceID string) (int, int, error) {
	if s.CountShellsFunc == nil {
		return 0, 0, notSet("Store.CountShells")
	}
	return s.CountShellsFunc(ctx, instance, workspaceID)
}

func (s *Store) SetShellState(ctx context.Context, id string, from []service.ShellState, state service.ShellState) (bool, error) {
	if s.SetShellStateFunc == nil {
		return false, notSet("Store.SetShellState")
	}
	return s.SetShellStateFunc(ctx, id, from, state)
}

func (s *Store) DeleteShell(ctx context.Context, id string) error {
	if s.DeleteShellFunc == nil {
		return notSet("Store.DeleteShell")
	}
	return s.DeleteShellFunc(ctx, id)
}

// FindShellEnd defaults to no end on record.
func (s *Store) FindShellEnd(ctx context.Context, id string) (*service.ShellEnd, error) {
	if s.FindShellEndFunc == nil {
		return nil, nil
	}
	return s.FindShellEndFunc(ctx, id)
}

func (s *Store) InsertExec(ctx context.Context, row *service.ExecRow) error {
	if s.InsertExecFunc == nil {
		return notSet("Store.InsertExec")
	}
	return s.InsertExecFunc(ctx, row)
}

func (s *Store) DeleteExec(ctx context.Context, id string) (bool, error) {
	if s.DeleteExecFunc == nil {
		return false, notSet("Store.DeleteExec")
	}
	return s.DeleteExecFunc(ctx, id)
}

func (s *Store) FindExecRows(ctx context.Context, instance string) ([]*service.ExecRow, error) {
	if s.FindExecRowsFunc == nil {
		return nil, notSet("Store.FindExecRows")
	}
	return s.FindExecRowsFunc(ctx, instance)
}

func (s *Store) LostExecRows(ctx context.Context, minAge time.Duration) ([]*service.ExecRow, error) {
	if s.LostExecRowsFunc == nil {
		return nil, notSet("Store.LostExecRows")
	}
	return s.LostExecRowsFunc(ctx, minAge)
}

func (s *Store) RenewInstance(ctx context.Context, instance string, ttl time.Duration) error {
	if s.RenewInstanceFunc == nil {
		return notSet("Store.RenewInstance")
	}
	return s.RenewInstanceFunc(ctx, instance, ttl)
}

func (s *Store) SetExecStarted(ctx context.Context, id string) error {
	if s.SetExecStartedFunc == nil {
		return notSet("Store.SetExecStarted")
	}
	return s.SetExecStartedFunc(ctx, id)
}
