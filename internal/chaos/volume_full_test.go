//go:build chaos

package chaos

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// volumeSize is the small workspace volume's filesystem.
const volumeSize = 8 << 20

// smallVolume gives the workspace a volume of volumeSize bytes: a Docker
// local-driver tmpfs volume the test creates under the workspace's volume
// name before the setup, which adopts a volume that exists (documented:
// the setup creates or adopts). No server change and no config: the
// server sees an ordinary local volume. A tmpfs volume is unmounted, and
// emptied, when no container mounts it, so a keeper container holds it
// mounted across the sidecars; stop ends it (it is the app's and would
// count as a leak).
func smallVolume(t *testing.T, srv *stacktest.Server, ws *cairn.Workspace) (stop func()) {
	t.Helper()
	_, err := stacktest.Docker(t).VolumeCreate(t.Context(), volume.CreateOptions{Name: ws.VolumeName, Driver: "local",
		DriverOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "size=8m,mode=0777"}})
	require.NoError(t, err)
	return keepMounted(t, srv, ws.VolumeName)
}

// TestVolumeFull fills a workspace volume of 8 MiB with a load over an
// existing file, a load to a new file and an unpack, each of 12 MiB: every
// one is volume_full (507), the existing file keeps its bytes, nothing is
// left beside it, and the volume takes a small load at once after.
func TestVolumeFull(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{})
	c := apiClient(t, srv)
	ctx := t.Context()
	ws, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "full"})
	require.NoError(t, err)
	stopKeeper := smallVolume(t, srv, ws)
	require.NoError(t, c.SetupVolume(ctx, ws.ID))
	vol := ws.VolumeName
	runInVolume(t, srv, vol, "mkdir /mnt/cairn/ws/in && printf old > /mnt/cairn/ws/in/target.bin")

	acked := map[string]string{}
	bigPath := filepath.Join(t.TempDir(), "big.bin")
	stacktest.RandomFile(t, bigPath, 0xb1, volumeSize*3/2)
	big := upload(t, c, ws.ID, bigPath, "big", acked)
	bundle := upload(t, c, ws.ID, tarGzFile(t, "payload.bin", volumeSize*3/2), "bundle", acked)
	smallPath := filepath.Join(t.TempDir(), "small.bin")
	stacktest.RandomFile(t, smallPath, 0x51, 64<<10)
	small := upload(t, c, ws.ID, smallPath, "small", acked)
	before := listing(t, srv, vol, "/mnt/cairn/ws/in")

	err = c.LoadIntoVolume(ctx, big.ID, "/mnt/cairn/ws/in/target.bin")
	requireReason(t, err, cairn.ReasonVolumeFull)
	require.Equal(t, "old", readVolumeFile(t, srv, vol, "/mnt/cairn/ws/in/target.bin"), "the target keeps its old bytes")
	require.Equal(t, before, listing(t, srv, vol, "/mnt/cairn/ws/in"), "no temporary file is left")

	requireReason(t, c.LoadIntoVolume(ctx, big.ID, "/mnt/cairn/ws/in/new.bin"), cairn.ReasonVolumeFull)
	require.Equal(t, before, listing(t, srv, vol, "/mnt/cairn/ws/in"), "no new partial file")

	_, err = c.UnpackArtifact(ctx, bundle.ID, "/mnt/cairn/ws/in/unpacked")
	struck := time.Now()
	requireReason(t, err, cairn.ReasonVolumeFull)
	// The room the failures took is free again: a load that fits succeeds
	// at once.
	require.NoError(t, c.LoadIntoVolume(ctx, small.ID, "/mnt/cairn/ws/in/small.bin"))
	recovery := time.Since(struck)
	requireOnlyEntries(t, before, "target.bin")
	requireOnlyEntries(t, listing(t, srv, vol, "/mnt/cairn/ws/in"), "target.bin", "small.bin")
	require.Equal(t, "old", readVolumeFile(t, srv, vol, "/mnt/cairn/ws/in/target.bin"))

	stopKeeper()
	sweep(t, srv)
	record(t, Row{Fault: "workspace volume full (load over a file, load, unpack)", InFlight: 3,
		Lost: lostArtifacts(t, srv, acked), Leaked: leaks(t, srv), Recovery: recovery})
}
