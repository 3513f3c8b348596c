package runtimetest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func testVolume(t *testing.T, h Harness) {
	t.Run("OKProvisionPrepList", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, _ := provision(t, s)
		ok, err := s.Runtime.VolumeExists(t.Context(), volume)
		require.NoError(t, err)
		require.True(t, ok)
		counts, err := s.Runtime.MountCounts(t.Context(), []string{volume})
		require.NoError(t, err)
		require.Equal(t, map[string]int{volume: 0}, counts, "the prep sidecar is gone, nothing mounts it")
		names, err := s.Volumes.ListVolumes(t.Context(), s.AppName+"-")
		require.NoError(t, err)
		require.Contains(t, names, volume)
	})

	t.Run("OKCreateIdempotentRemoveAbsent", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := volumeName(s.AppName)
		ctx := t.Context()
		require.NoError(t, s.Runtime.CreateVolume(ctx, volume, map[string]string{"cairn.workspace": id}, 0))
		require.NoError(t, s.Runtime.CreateVolume(ctx, volume, map[string]string{"cairn.workspace": id}, 0))
		require.NoError(t, s.Runtime.RemoveVolume(ctx, volume))
		ok, err := s.Runtime.VolumeExists(ctx, volume)
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, s.Runtime.RemoveVolume(ctx, volume), "an absent volume is no error")
	})

	t.Run("ErrVolumeInUseWhileMounted", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, _ := provision(t, s)
		ctx := t.Context()
		stop := s.Mount(t, volume)
		counts, err := s.Runtime.MountCounts(ctx, []string{volume, "absent-" + volume})
		require.NoError(t, err)
		require.Equal(t, 1, counts[volume])
		require.Equal(t, 0, counts["absent-"+volume])

		err = s.Runtime.RemoveVolume(ctx, volume)
		require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(err), "err: %v", err)
		ok, err := s.Runtime.VolumeExists(ctx, volume)
		require.NoError(t, err)
		require.True(t, ok, "a refused teardown leaves the volume")

		stop()
		counts, err = s.Runtime.MountCounts(ctx, []string{volume})
		require.NoError(t, err)
		require.Equal(t, 0, counts[volume])
		require.NoError(t, s.Runtime.RemoveVolume(ctx, volume))
		ok, err = s.Runtime.VolumeExists(ctx, volume)
		require.NoError(t, err)
		require.False(t, ok)
	})
}
