package runtimetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testSweep(t *testing.T, h Harness) {
	t.Run("OKLeakedSidecarFoundAndRemoved", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := provision(t, s)
		leaked := s.Leak(t, volume, id)
		list, err := s.Containers.ListSidecars(t.Context(), s.AppName)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, leaked, list[0].ID)
		require.Equal(t, id, list[0].WorkspaceID)
		require.WithinDuration(t, time.Now(), list[0].Created, 10*time.Minute)

		require.NoError(t, s.Containers.RemoveContainer(t.Context(), leaked))
		require.NoError(t, s.Containers.RemoveContainer(t.Context(), leaked), "an absent one is no error")
		requireNoSidecars(t, s)
	})

	t.Run("OKOrphanedVolumeListed", func(t *testing.T) {
		t.Parallel()
		s := h.New(t, 0)
		volume, id := volumeName(s.AppName)
		require.NoError(t, s.Runtime.CreateVolume(t.Context(), volume, map[string]string{"cairn.workspace": id}, 0))
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = s.Runtime.RemoveVolume(ctx, volume)
		})
		names, err := s.Volumes.ListVolumes(t.Context(), s.AppName+"-")
		require.NoError(t, err)
		require.Equal(t, []string{volume}, names, "the sweep sees a volume no row owns")
		names, err = s.Volumes.ListVolumes(t.Context(), s.AppName+"-none-")
		require.NoError(t, err)
		require.Empty(t, names)
	})
}
