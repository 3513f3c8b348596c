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
	FindWorkspacesFunc   func(ctx context.Context, f cairn.WorkspaceFilter) ([]*cairn.Workspace, error)
	UpdateWorkspaceFunc  func(ctx context.Context, ws *cairn.Workspace) error
	DeleteWorkspaceFunc  func(ctx context.Context, id string, releasedAt time.Time) error
	InsertAuditFunc      func(ctx context.Context, ev *cairn.AuditEvent) error
	LockWorkspaceFunc    func(ctx context.Context, id string, mode service.LockMode) (func(), error)
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
