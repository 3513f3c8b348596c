package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
)

func TestListAndRemoveSidecars(t *testing.T) {
	t.Parallel()
	r, b := setup(t, docker.Config{})
	ctx := context.Background()
	create := func(app, role string) string {
		resp, err := b.cli.ContainerCreate(ctx, &container.Config{Image: stacktest.Shell(t), Cmd: []string{"-c", "true"},
			Labels: map[string]string{docker.LabelApp: app, docker.LabelRole: role}}, nil, nil, nil, "")
		require.NoError(t, err)
		return resp.ID
	}
	sidecar := create(b.app, "sidecar")
	create(b.app, "shell")
	other := stacktest.AppName(t)
	create(other, "sidecar")

	list, err := r.ListSidecars(ctx, b.app)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, sidecar, list[0].ID)
	require.WithinDuration(t, time.Now(), list[0].Created, time.Minute)

	require.NoError(t, r.RemoveContainer(ctx, sidecar))
	require.NoError(t, r.RemoveContainer(ctx, sidecar), "an absent container is no error")
	list, err = r.ListSidecars(ctx, b.app)
	require.NoError(t, err)
	require.Empty(t, list)
}
