package docker

import (
	"context"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/cairn-dev/cairn/server/reconcile"
)

var _ reconcile.Containers = (*Runtime)(nil)

// ListSidecars lists every container, running or not, labelled as a sidecar
// of app.
func (r *Runtime) ListSidecars(ctx context.Context, app string) ([]reconcile.Container, error) {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	list, err := r.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", LabelApp+"="+app),
		filters.Arg("label", LabelRole+"=sidecar"),
	)})
	if err != nil {
		return nil, unavailable("list sidecar containers", err)
	}
	out := make([]reconcile.Container, len(list))
	for i, c := range list {
		out[i] = reconcile.Container{ID: c.ID, Created: time.Unix(c.Created, 0),
			Instance: c.Labels[LabelInstance], WorkspaceID: c.Labels[LabelWorkspace]}
	}
	return out, nil
}

// RemoveContainer force-removes a container; an absent one is no error.
func (r *Runtime) RemoveContainer(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(ctx, cleanupTimeout)
	defer cancel()
	err := r.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return unavailable("remove a container", err)
	}
	return nil
}
