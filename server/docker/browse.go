package docker

import (
	"context"
	"errors"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Browse is a placeholder until the browse containers are built.
func (r *Runtime) Browse(ctx context.Context, t service.BrowseTarget, req sidecar.BrowseRequest) (*sidecar.BrowseReply, error) {
	return nil, unavailable("browse", errors.New("not built yet"))
}

// StopBrowse is a placeholder until the browse containers are built.
func (r *Runtime) StopBrowse(ctx context.Context, workspaceID string) error { return nil }
