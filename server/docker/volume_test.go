package docker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
)

func TestVolumeExists(t *testing.T) {
	t.Parallel()

	t.Run("CreatedWithLabels", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		labels := map[string]string{"cairn.app": b.app, "cairn.workspace": "01JTESTWORKSPACE"}

		require.NoError(t, r.CreateVolume(ctx, b.volume, labels, 0))

		ok, err := r.VolumeExists(ctx, b.volume)
		require.NoError(t, err)
		require.True(t, ok)
		vol, err := b.cli.VolumeInspect(ctx, b.volume)
		require.NoError(t, err)
		require.Equal(t, "local", vol.Driver)
		for k, v := range labels {
			require.Equal(t, v, vol.Labels[k], "label %s", k)
		}
	})

	t.Run("AbsentIsFalse", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})

		ok, err := r.VolumeExists(t.Context(), b.volume)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestRemoveVolume(t *testing.T) {
	t.Parallel()

	t.Run("AbsentIsNil", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})

		require.NoError(t, r.RemoveVolume(t.Context(), b.volume))
	})

	t.Run("ErrVolumeInUseUntilUnmounted", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		require.NoError(t, r.CreateVolume(ctx, b.volume, nil, 0))
		stop := stacktest.StartMounting(t, b.app, b.volume)
		holders, err := b.cli.ContainerList(ctx, container.ListOptions{Filters: appFilter(b.app)})
		require.NoError(t, err)
		require.Len(t, holders, 1)

		err = r.RemoveVolume(ctx, b.volume)
		var cerr *cairn.Error
		require.ErrorAs(t, err, &cerr)
		require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err))
		// The error does not list the mounting containers.
		require.NotContains(t, cerr.Detail, holders[0].ID[:12])
		ok, err := r.VolumeExists(ctx, b.volume)
		require.NoError(t, err)
		require.True(t, ok, "a refused removal leaves the volume")

		stop()
		require.NoError(t, r.RemoveVolume(ctx, b.volume))
		ok, err = r.VolumeExists(ctx, b.volume)
		require.NoError(t, err)
		require.False(t, ok)
	})
}

func TestMountCounts(t *testing.T) {
	t.Parallel()

	t.Run("RunningContainersOnly", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		require.NoError(t, r.CreateVolume(ctx, b.volume, nil, 0))
		count := func() map[string]int {
			counts, err := r.MountCounts(ctx, []string{b.volume})
			require.NoError(t, err)
			return counts
		}

		// A created container and an exited one mount the volume too, but
		// neither is running.
		createMounting(t, b, "true")
		exited := createMounting(t, b, "true")
		require.NoError(t, b.cli.ContainerStart(ctx, exited, container.StartOptions{}))
		waitExited(t, b, exited)
		require.Equal(t, map[string]int{b.volume: 0}, count())

		stop1 := stacktest.StartMounting(t, b.app, b.volume)
		stop2 := stacktest.StartMounting(t, b.app, b.volume)
		require.Equal(t, map[string]int{b.volume: 2}, count())

		stop1()
		stop2()
		require.Equal(t, map[string]int{b.volume: 0}, count())
	})

	t.Run("ManyVolumesInOneCall", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		busy, idle, absent := b.volume, b.volume+"-idle", b.volume+"-absent"
		unasked := b.volume + "-unasked"
		for _, v := range []string{busy, idle, unasked} {
			require.NoError(t, r.CreateVolume(ctx, v, nil, 0))
		}
		stop := stacktest.StartMounting(t, b.app, busy)
		defer stop()
		stopOther := stacktest.StartMounting(t, b.app, unasked)
		defer stopOther()

		// A name that is a prefix of another is not confused with it; an
		// absent volume has no mounts.
		counts, err := r.MountCounts(ctx, []string{busy, idle, absent})
		require.NoError(t, err)
		require.Equal(t, map[string]int{busy: 1, idle: 0, absent: 0}, counts)
	})

	t.Run("PastTheFilterLimit", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		require.NoError(t, r.CreateVolume(ctx, b.volume, nil, 0))
		stop := stacktest.StartMounting(t, b.app, b.volume)
		defer stop()
		names := []string{b.volume}
		want := map[string]int{b.volume: 1}
		for i := range docker.MaxFilteredVolumes {
			names = append(names, fmt.Sprintf("%s-absent-%d", b.volume, i))
			want[names[len(names)-1]] = 0
		}
		counts, err := r.MountCounts(ctx, names)
		require.NoError(t, err)
		require.Equal(t, want, counts)
	})
}

func TestListVolumes(t *testing.T) {
	t.Parallel()

	t.Run("TruePrefixesOnly", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})
		ctx := t.Context()
		prefix := b.app + "-"
		// The engine's name filter matches substrings, so it also returns
		// this one; RemoveApp's substring filter removes it at cleanup.
		infix := "zz" + b.app + "-mid"
		for _, name := range []string{prefix + "a", prefix + "b", infix} {
			require.NoError(t, r.CreateVolume(ctx, name, nil, 0))
		}

		names, err := r.ListVolumes(ctx, prefix)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{prefix + "a", prefix + "b"}, names)
	})

	t.Run("NoneIsEmpty", func(t *testing.T) {
		t.Parallel()
		r, b := setup(t, docker.Config{})

		names, err := r.ListVolumes(t.Context(), b.app+"-")
		require.NoError(t, err)
		require.Empty(t, names)
	})
}

// createMounting creates, without starting, a shell container of the app
// that mounts the test volume and runs script; it returns the container ID.
func createMounting(t *testing.T, b *testBundle, script string) string {
	t.Helper()
	resp, err := b.cli.ContainerCreate(t.Context(), &container.Config{
		Image: stacktest.Shell(t), Cmd: []string{"-c", script},
		Labels: map[string]string{docker.LabelApp: b.app},
	}, &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: b.volume, Target: cairn.MountPath}},
	}, nil, nil, "")
	require.NoError(t, err)
	return resp.ID
}

// waitExited waits until the container is no longer running.
func waitExited(t *testing.T, b *testBundle, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	results, errs := b.cli.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	select {
	case <-results:
	case err := <-errs:
		require.NoError(t, err)
	}
}
