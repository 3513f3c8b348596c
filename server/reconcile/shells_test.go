package reconcile_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/reconcile"
)

// TestLeakedShells is not parallel: TestLeakedSidecars's one-second
// creation-time margin does not survive a busy engine.
func TestLeakedShells(t *testing.T) {
	e := setup(t)
	cli := stacktest.Docker(t)
	ctx := context.Background()
	ws := e.workspace(t, cairn.VolumeNone)
	now := time.Now()
	create := func(cmd, workspaceID, instance string, expires time.Time, start bool) string {
		resp, err := cli.ContainerCreate(ctx, &container.Config{Image: stacktest.Shell(t), Cmd: []string{"-c", cmd},
			Labels: map[string]string{
				docker.LabelApp: e.app, docker.LabelKind: docker.KindShell, docker.LabelShell: ulid.Make().String(),
				docker.LabelWorkspace: workspaceID, docker.LabelInstance: instance,
				docker.LabelExpires: strconv.FormatInt(expires.Unix(), 10),
			}}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
		require.NoError(t, err)
		t.Cleanup(func() { _ = e.rt.RemoveContainer(context.Background(), resp.ID) })
		if start {
			require.NoError(t, cli.ContainerStart(ctx, resp.ID, container.StartOptions{}))
		}
		return resp.ID
	}
	later := now.Add(time.Hour)
	expired := create("sleep 300", ws.ID, "host-a:1", now, true)
	exited := create("true", ws.ID, "host-a:1", later, true)
	neverStarted := create("true", ws.ID, "host-a:1", later, false)
	live := create("sleep 300", ws.ID, "host-a:1", later, true)
	// Another stack's: neither its instance nor its workspace is ours.
	foreign := create("sleep 300", "00000000-0000-4000-8000-000000000000", "other-stack", now, true)
	results, errs := cli.ContainerWait(ctx, exited, container.WaitConditionNotRunning)
	select {
	case <-results:
	case err := <-errs:
		require.NoError(t, err)
	}

	shells := docker.NewShells(cli, docker.ShellConfig{AppName: e.app})
	// Two minutes on: past expiry + 60 s, exit + 60 s and open (30 s) + 60 s.
	r := e.reconciler(reconcile.Config{Shells: shells, ShellOpenTimeout: 30 * time.Second,
		Now: func() time.Time { return now.Add(2 * time.Minute) }})
	res := pass(t, r)
	require.Empty(t, res.Errors)
	require.Equal(t, 3, res.ContainersRemoved)
	list, err := shells.ListShells(ctx)
	require.NoError(t, err)
	var left []string
	for _, c := range list {
		left = append(left, c.ContainerID)
	}
	require.ElementsMatch(t, []string{live, foreign}, left)
	for _, id := range []string{expired, exited, neverStarted} {
		_, err := cli.ContainerInspect(ctx, id)
		require.Error(t, err, "removed")
	}

	res = pass(t, e.reconciler(reconcile.Config{Shells: shells}))
	require.Zero(t, res.ContainersRemoved, "at the real time nothing else is leaked")
}
