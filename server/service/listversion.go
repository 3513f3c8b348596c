package service

import (
	"context"
	"errors"

	"github.com/cairn-dev/cairn"
)

var _ cairn.ListVersionService = (*Service)(nil)

// ListVersions is the store's side of cairn.ListVersionService: counters it
// keeps in the transaction of every change, read in one query. A Store
// that also implements it gives the service list versions; the postgres
// store does.
type ListVersions interface {
	// WorkspaceListVersion reads the workspace list's counter.
	WorkspaceListVersion(ctx context.Context) (int64, error)
	// ArtifactListVersion reads the counter of a workspace's artifact list.
	// Reasons: workspace_not_found.
	ArtifactListVersion(ctx context.Context, workspaceID string) (int64, error)
}

// WorkspaceListVersion returns the workspace list's version.
func (s *Service) WorkspaceListVersion(ctx context.Context) (int64, error) {
	lv, err := s.listVersions()
	if err != nil {
		return 0, err
	}
	return lv.WorkspaceListVersion(ctx)
}

// ArtifactListVersion returns the version of a workspace's artifact list.
// Reasons: workspace_not_found.
func (s *Service) ArtifactListVersion(ctx context.Context, workspaceID string) (int64, error) {
	lv, err := s.listVersions()
	if err != nil {
		return 0, err
	}
	return lv.ArtifactListVersion(ctx, workspaceID)
}

// listVersions is the store as ListVersions. The port is optional so that
// Store keeps its shape; a store without it is a wiring mistake, reported
// as an internal error rather than a list served without its version.
func (s *Service) listVersions() (ListVersions, error) {
	lv, ok := s.store.(ListVersions)
	if !ok {
		return nil, cairn.Internal("internal error", errors.New("the store keeps no list versions"))
	}
	return lv, nil
}
