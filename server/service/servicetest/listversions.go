package servicetest

import (
	"context"

	"github.com/cairn-dev/cairn/server/service"
)

var _ service.ListVersions = (*ListVersions)(nil)

// ListVersions is a fake service.ListVersions. A test that needs a store
// with list versions embeds it beside a Store:
//
//	struct{ *servicetest.Store; *servicetest.ListVersions }
type ListVersions struct {
	WorkspaceListVersionFunc func(ctx context.Context) (int64, error)
	ArtifactListVersionFunc  func(ctx context.Context, workspaceID string) (int64, error)
}

func (l *ListVersions) WorkspaceListVersion(ctx context.Context) (int64, error) {
	if l.WorkspaceListVersionFunc == nil {
		return 0, notSet("ListVersions.WorkspaceListVersion")
	}
	return l.WorkspaceListVersionFunc(ctx)
}

func (l *ListVersions) ArtifactListVersion(ctx context.Context, workspaceID string) (int64, error) {
	if l.ArtifactListVersionFunc == nil {
		return 0, notSet("ListVersions.ArtifactListVersion")
	}
	return l.ArtifactListVersionFunc(ctx, workspaceID)
}
