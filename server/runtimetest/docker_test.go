package runtimetest_test

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/runtimetest"
)

// TestMain takes down, at the end, the local cluster the kube build tag's
// tests brought up (kube_test.go); without the tag there is none.
func TestMain(m *testing.M) { stacktest.Main(m, clusterDown) }

// TestDocker runs the conformance suite on the Docker Engine. Transfer
// sidecars run on the host network, as in the dev stack, so they reach the
// suite's stores on loopback.
func TestDocker(t *testing.T) {
	t.Parallel()
	runtimetest.Run(t, runtimetest.Harness{New: newDocker})
}

func newDocker(t *testing.T, timeout time.Duration) *runtimetest.Subject {
	cli := stacktest.Docker(t)
	app := stacktest.AppName(t)
	rt := docker.New(cli, docker.Config{AppName: app, Image: stacktest.Image(t), NetworkMode: "host", Timeout: timeout})
	shells := docker.NewShells(cli, docker.ShellConfig{AppName: app, Image: stacktest.Shell(t)})
	return &runtimetest.Subject{
		AppName: app, Runtime: rt, Shells: shells, Execs: shells, Containers: rt, Volumes: rt,
		Mount: func(t *testing.T, volume string) func() { return stacktest.StartMounting(t, app, volume) },
		Leak: func(t *testing.T, volume, workspaceID string) string {
			return leakContainer(t, app, volume, workspaceID)
		},
		Logs: func(t *testing.T, id string) []byte { return noLogs(t, id) },
	}
}

// noLogs checks that Docker keeps no log of a shell container: its log
// driver is none, and Docker refuses to read one.
func noLogs(t *testing.T, id string) []byte {
	t.Helper()
	cli := stacktest.Docker(t)
	info, err := cli.ContainerInspect(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, "none", info.HostConfig.LogConfig.Type)
	logs, err := cli.ContainerLogs(t.Context(), id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err == nil {
		_ = logs.Close()
	}
	require.Error(t, err, "Docker has no log of the container to give")
	return nil
}

// leakContainer starts a sidecar-labelled container that nothing removes,
// as a server that crashed mid-run leaves one.
func leakContainer(t *testing.T, app, volume, workspaceID string) string {
	t.Helper()
	cli := stacktest.Docker(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	resp, err := cli.ContainerCreate(ctx, &container.Config{
		Image: stacktest.Shell(t), Cmd: []string{"-c", "sleep 600"},
		Labels: map[string]string{docker.LabelApp: app, docker.LabelRole: "sidecar", docker.LabelSidecar: "true",
			docker.LabelWorkspace: workspaceID},
	}, &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: cairn.MountPath}},
	}, nil, nil, "")
	require.NoError(t, err)
	require.NoError(t, cli.ContainerStart(ctx, resp.ID, container.StartOptions{}))
	return resp.ID
}
