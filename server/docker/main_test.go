package docker_test

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// testBundle is what a test needs beside the Runtime under test.
type testBundle struct {
	app    string         // unique app name; its containers and volumes go at cleanup
	volume string         // a volume name of the app, not created
	cli    *client.Client // the engine, for inspecting behind the Runtime's back
}

// setup returns a Runtime on the real engine with a unique app name and the
// current sidecar image; cfg's AppName and Image are filled in when empty.
func setup(t *testing.T, cfg docker.Config) (*docker.Runtime, *testBundle) {
	t.Helper()
	cli := stacktest.Docker(t)
	app := stacktest.AppName(t)
	if cfg.AppName == "" {
		cfg.AppName = app
	}
	if cfg.Image == "" {
		cfg.Image = stacktest.Image(t)
	}
	return docker.New(cli, cfg), &testBundle{app: app, volume: app + "-ws", cli: cli}
}

// sidecarsOf lists every container, running or not, that is a sidecar of app.
func sidecarsOf(t *testing.T, cli *client.Client, app string) []container.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", docker.LabelSidecar+"=true"),
		filters.Arg("label", docker.LabelApp+"="+app),
	)})
	require.NoError(t, err)
	return list
}

// appFilter selects the containers labelled with app.
func appFilter(app string) filters.Args {
	return filters.NewArgs(filters.Arg("label", docker.LabelApp+"="+app))
}
