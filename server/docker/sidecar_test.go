package docker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// prepSpec is the spec the service runs on volume setup.
func prepSpec(b *testBundle) service.SidecarSpec {
	return service.SidecarSpec{
		Command:     sidecar.CommandPrep,
		Role:        "volume-prep",
		Subject:     "01JTESTWORKSPACE",
		WorkspaceID: "01JTESTWORKSPACE",
		VolumeName:  b.volume,
		Env:         map[string]string{sidecar.EnvMountRoot: cairn.MountPath},
	}
}

func TestRunSidecarPrep(t *testing.T) {
	t.Parallel()

	t.Run("OKMountRootWorldWritable", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		require.NoError(t, r.CreateVolume(ctx, b.volume, nil, 0))

		run, err := r.RunSidecar(ctx, prepSpec(b))
		require.NoError(t, err)
		require.Equal(t, 0, run.ExitCode, "output: %q", run.Output)
		res, ok := sidecar.ParseResult(run.Output)
		require.True(t, ok, "output: %q", run.Output)
		require.True(t, res.OK, "output: %q", run.Output)
		require.Equal(t, cairn.MountPath, res.PreparedPath)

		mode := stacktest.RunInVolume(t, b.app, b.volume, "stat -c '%u %g %a' "+cairn.MountPath)
		require.Equal(t, "0 0 777", mode)
		require.Empty(t, sidecarsOf(t, b.cli, b.app), "the sidecar is removed after the run")
	})

	t.Run("PrepFailedOnForeignOwner", func(t *testing.T) {
		t.Parallel()
		// Prep has no capabilities: chown to root of a root
		// owned by another user is refused, and the sidecar says so.
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		require.NoError(t, r.CreateVolume(ctx, b.volume, nil, 0))
		stacktest.RunInVolume(t, b.app, b.volume, "chown 1000:1000 "+cairn.MountPath+" && chmod 700 "+cairn.MountPath)

		run, err := r.RunSidecar(ctx, prepSpec(b))
		require.NoError(t, err)
		require.Equal(t, sidecar.ExitFailure, run.ExitCode, "output: %q", run.Output)
		res, ok := sidecar.ParseResult(run.Output)
		require.True(t, ok, "output: %q", run.Output)
		require.False(t, res.OK)
		require.Equal(t, sidecar.ReasonPrepFailed, res.ReasonText())
		require.NotContains(t, res.ErrorText(), cairn.MountPath, "no path in the message")
		require.Empty(t, sidecarsOf(t, b.cli, b.app), "the sidecar is removed after a failed run")
	})
}

func TestRunSidecarTimeout(t *testing.T) {
	t.Parallel()

	t.Run("ErrSidecarTimeoutAndRemoved", func(t *testing.T) {
		t.Parallel()
		cli := stacktest.Docker(t)
		r, b := setup(t, docker.Config{Image: sleeperImage(t, cli), Timeout: time.Second})

		began := time.Now()
		run, err := r.RunSidecar(t.Context(), prepSpec(b))
		took := time.Since(began)

		require.Nil(t, run)
		require.Equal(t, cairn.ReasonSidecarTimeout, cairn.ErrorReason(err), "err: %v", err)
		// took also holds the container's creation, start and removal,
		// seconds each on a loaded engine; the sleeper would run 60 s.
		require.Less(t, took, 30*time.Second, "stopped soon after the timeout")
		require.Empty(t, sidecarsOf(t, b.cli, b.app), "the timed-out sidecar is removed")
	})
}

func TestRunSidecarBusy(t *testing.T) {
	t.Parallel()

	t.Run("ErrSidecarBusyWhileSlotHeld", func(t *testing.T) {
		t.Parallel()
		cli := stacktest.Docker(t)
		r, b := setup(t, docker.Config{Image: sleeperImage(t, cli), MaxConcurrent: 1, Timeout: 30 * time.Second})

		// The sleeper holds the only slot until it is cancelled; its slot is
		// taken before its container is created.
		ctx, cancel := context.WithCancel(t.Context())
		var heldErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			_, heldErr = r.RunSidecar(ctx, prepSpec(b))
		}()
		t.Cleanup(func() { cancel(); <-done })
		require.Eventually(t, func() bool {
			list, err := b.cli.ContainerList(t.Context(), container.ListOptions{All: true, Filters: appFilter(b.app)})
			return err == nil && len(list) == 1
		}, 20*time.Second, 50*time.Millisecond, "the first sidecar was never created")

		short, cancelShort := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancelShort()
		run, err := r.RunSidecar(short, prepSpec(b))
		require.Nil(t, run)
		require.Equal(t, cairn.ReasonSidecarBusy, cairn.ErrorReason(err), "err: %v", err)
		require.Len(t, sidecarsOf(t, b.cli, b.app), 1, "a busy run creates no container")

		cancel()
		<-done
		require.Error(t, heldErr)
		require.Empty(t, sidecarsOf(t, b.cli, b.app), "a cancelled run removes its sidecar")
	})
}

func TestDockerUnavailable(t *testing.T) {
	t.Parallel()
	const sock = "/nonexistent-cairn-test.sock"
	cli, err := client.NewClientWithOpts(client.WithHost("unix://"+sock), client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	t.Cleanup(func() { _ = cli.Close() })
	r := docker.New(cli, docker.Config{AppName: "cairnt-dead"})
	spec := service.SidecarSpec{Command: sidecar.CommandPrep, Role: "volume-prep", Subject: "ws",
		WorkspaceID: "ws", VolumeName: "cairnt-dead-ws", Env: map[string]string{sidecar.EnvMountRoot: cairn.MountPath}}

	for _, tt := range []struct {
		name string
		call func(context.Context) error
	}{
		{"PingErrDockerUnavailable", r.Ping},
		{"VolumeExistsErrDockerUnavailable", func(ctx context.Context) error {
			_, err := r.VolumeExists(ctx, spec.VolumeName)
			return err
		}},
		{"CreateVolumeErrDockerUnavailable", func(ctx context.Context) error {
			return r.CreateVolume(ctx, spec.VolumeName, nil, 0)
		}},
		{"RemoveVolumeErrDockerUnavailable", func(ctx context.Context) error {
			return r.RemoveVolume(ctx, spec.VolumeName)
		}},
		{"MountCountsErrDockerUnavailable", func(ctx context.Context) error {
			_, err := r.MountCounts(ctx, []string{spec.VolumeName})
			return err
		}},
		{"ListVolumesErrDockerUnavailable", func(ctx context.Context) error {
			_, err := r.ListVolumes(ctx, "cairnt-dead-")
			return err
		}},
		{"RunSidecarErrDockerUnavailable", func(ctx context.Context) error {
			_, err := r.RunSidecar(ctx, spec)
			return err
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.call(t.Context())
			require.Equal(t, cairn.ReasonDockerUnavailable, cairn.ErrorReason(err), "err: %v", err)
			detail := cairn.ErrorDetail(err)
			require.NotEmpty(t, detail)
			require.NotContains(t, detail, "nonexistent")
			require.NotContains(t, detail, ".sock")
		})
	}
}

func TestCheckImage(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		r, _ := setup(t, docker.Config{})

		require.NoError(t, r.CheckImage(t.Context()))
	})

	t.Run("ErrAbsentSaysMakeImages", func(t *testing.T) {
		t.Parallel()
		tag := "cairn-sidecar-absent:" + strings.ToLower(ulid.Make().String())
		r, _ := setup(t, docker.Config{Image: tag})

		err := r.CheckImage(t.Context())
		require.Error(t, err)
		require.Contains(t, err.Error(), "make images")
		require.Contains(t, err.Error(), tag)
	})
}

// sleeperSource is a stand-in sidecar that never answers in time. Go's
// default SIGINT handling makes it exit when the runtime stops it, even as
// PID 1.
const sleeperSource = `package main

import "time"

func main() { time.Sleep(60 * time.Second) }
`

// sleeperImage builds a scratch image whose /cairn-sidecar sleeps for a
// minute, under a tag unique to the test and removed at cleanup.
func sleeperImage(t *testing.T, cli *client.Client) string {
	t.Helper()
	tag, err := standIn(t, cli, "sleeper", sleeperSource)
	require.NoError(t, err)
	return tag
}
