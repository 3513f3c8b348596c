package rest_test

import (
	"net/http"
	"testing"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/volume"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/rest"
)

// statRoot is how a tool container sees the mount root: "uid gid mode".
const statRoot = "stat -c '%u %g %a' /mnt/cairn/ws"

// volumeExists asks the engine, behind the API's back.
func (b *testBundle) volumeExists(t testing.TB, name string) (volume.Volume, bool) {
	t.Helper()
	vol, err := b.cli.VolumeInspect(t.Context(), name)
	if cerrdefs.IsNotFound(err) {
		return vol, false
	}
	require.NoError(t, err)
	return vol, true
}

// TestVolumeLifecycle walks one workspace through setup, a repeat that
// repairs the root, the guards that a READY volume puts on metadata edits,
// workspace delete and teardown, a refused teardown while mounted, and the
// final teardown and delete.
func TestVolumeLifecycle(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	ws := create(t, u, b, `{"name":"vol","volume_metadata":{"size_bytes":1048576}}`)
	path := u + "/v1/workspaces/" + ws.ID

	t.Run("OKSetup", func(t *testing.T) {
		_, mounts := get(t, u, b, ws.ID)
		require.Equal(t, -1, mounts, "no volume yet")

		bare(t, do(t, http.MethodPost, path+"/volume", ""))

		vol, exists := b.volumeExists(t, ws.VolumeName)
		require.True(t, exists)
		require.Equal(t, "local", vol.Driver)
		require.Empty(t, vol.Options, "size_bytes is never passed to Docker")
		require.Equal(t, b.app, vol.Labels["cairn.app"])
		require.Equal(t, ws.ID, vol.Labels["cairn.workspace"])
		require.Equal(t, "0 0 777", stacktest.RunInVolume(t, b.app, ws.VolumeName, statRoot))
		got, mounts := get(t, u, b, ws.ID)
		require.Equal(t, "READY", got.VolumeState)
		require.Equal(t, 0, mounts, "a volume that nothing mounts")
		require.True(t, got.UpdatedAt.After(ws.UpdatedAt))
		require.Equal(t, ws.VolumeName, got.VolumeName)

		events := b.audit(t, ws.ID)
		require.Equal(t, []string{"NEW_WORKSPACE", "WORKSPACE_VOLUME_STATE"}, b.auditTypes(t, ws.ID))
		require.Equal(t, map[string]any{
			"workspace_id": ws.ID, "workspace_name": "vol", "volume_name": ws.VolumeName, "new_state": "READY",
		}, events[1].Metadata)
	})

	t.Run("OKRepeatRepairsRoot", func(t *testing.T) {
		stacktest.RunInVolume(t, b.app, ws.VolumeName, "touch /mnt/cairn/ws/kept && chmod 700 /mnt/cairn/ws")
		require.Equal(t, "0 0 700", stacktest.RunInVolume(t, b.app, ws.VolumeName, statRoot))

		bare(t, do(t, http.MethodPost, path+"/volume", ""))

		require.Equal(t, "0 0 777", stacktest.RunInVolume(t, b.app, ws.VolumeName, statRoot))
		stacktest.RunInVolume(t, b.app, ws.VolumeName, "test -f /mnt/cairn/ws/kept")
		got, _ := get(t, u, b, ws.ID)
		require.Equal(t, "READY", got.VolumeState)
		require.Equal(t, []string{"NEW_WORKSPACE", "WORKSPACE_VOLUME_STATE", "WORKSPACE_VOLUME_STATE"},
			b.auditTypes(t, ws.ID), "READY → READY is audited too")
	})

	t.Run("ErrVolumeExistsOnMetadataEdit", func(t *testing.T) {
		before := b.snapshot(t, "workspaces")

		e := fails(t, do(t, http.MethodPut, path+"/volume-metadata", `{"volume_metadata":{"size_bytes":1}}`),
			http.StatusConflict, "volume_exists")

		require.Equal(t, "Failed to update workspace "+ws.ID+" volume metadata", e.Message)
		require.Equal(t, "workspace "+ws.ID+" already has a persistent volume ('"+ws.VolumeName+
			"' is 'READY'); its volume metadata can no longer be changed", e.Detail)
		fails(t, do(t, http.MethodPut, path+"/volume-metadata", `{"volume_metadata":null}`),
			http.StatusConflict, "volume_exists")
		require.Equal(t, before, b.snapshot(t, "workspaces"))
	})

	t.Run("OKDescriptionAndRenameWhileReady", func(t *testing.T) {
		ok(t, do(t, http.MethodPut, path+"/description", `{"description":"busy"}`))
		env := ok(t, do(t, http.MethodPut, path+"/name?name=vol2", ""))
		got := decodeWorkspace(t, env.Workspace, b.app)
		require.Equal(t, ws.VolumeName, got.VolumeName)
		require.Equal(t, "READY", got.VolumeState)
		ok(t, do(t, http.MethodPut, path+"/name?name=vol", ""))
	})

	t.Run("ErrVolumeExistsOnDelete", func(t *testing.T) {
		before, events := b.snapshot(t, "workspaces"), b.count(t, "audit_system_events")

		e := fails(t, do(t, http.MethodDelete, path, ""), http.StatusConflict, "volume_exists")

		require.Equal(t, "Failed to delete workspace "+ws.ID, e.Message)
		require.Equal(t, "workspace "+ws.ID+" still has a persistent volume ('"+ws.VolumeName+
			"' is 'READY'); delete the volume first", e.Detail)
		require.Equal(t, before, b.snapshot(t, "workspaces"))
		require.Equal(t, events, b.count(t, "audit_system_events"))
		_, exists := b.volumeExists(t, ws.VolumeName)
		require.True(t, exists)
	})

	t.Run("ErrVolumeInUseWhileMounted", func(t *testing.T) {
		stop := stacktest.StartMounting(t, b.app, ws.VolumeName)
		defer stop()
		_, mounts := get(t, u, b, ws.ID)
		require.Equal(t, 1, mounts, "one running container mounts it")
		events := b.count(t, "audit_system_events")

		e := fails(t, do(t, http.MethodDelete, path+"/volume", ""), http.StatusConflict, "volume_in_use")

		require.Equal(t, "Failed to tear down workspace "+ws.ID+" persistent volume", e.Message)
		require.Equal(t, "docker volume '"+ws.VolumeName+"' is currently mounted and can't be deleted without force", e.Detail)
		_, exists := b.volumeExists(t, ws.VolumeName)
		require.True(t, exists, "a refused teardown leaves the volume")
		got, mounts := get(t, u, b, ws.ID)
		require.Equal(t, "READY", got.VolumeState)
		require.Equal(t, 1, mounts)
		require.Equal(t, events, b.count(t, "audit_system_events"), "a refused teardown is not audited")

		stop()
		_, mounts = get(t, u, b, ws.ID)
		require.Equal(t, 0, mounts, "stopped and removed: nothing mounts it")
	})

	t.Run("OKTeardown", func(t *testing.T) {
		before, _ := get(t, u, b, ws.ID)

		bare(t, do(t, http.MethodDelete, path+"/volume", ""))

		_, exists := b.volumeExists(t, ws.VolumeName)
		require.False(t, exists)
		got, mounts := get(t, u, b, ws.ID)
		require.Equal(t, "NONE", got.VolumeState)
		require.Equal(t, -1, mounts)
		require.True(t, got.UpdatedAt.After(before.UpdatedAt), "updated_at moves on a teardown")
		events := b.audit(t, ws.ID)
		require.Equal(t, map[string]any{
			"workspace_id": ws.ID, "workspace_name": "vol", "volume_name": ws.VolumeName, "new_state": "NONE",
		}, events[len(events)-1].Metadata)
	})

	t.Run("OKTeardownRepeat", func(t *testing.T) {
		events := len(b.audit(t, ws.ID))

		bare(t, do(t, http.MethodDelete, path+"/volume", ""))

		got, _ := get(t, u, b, ws.ID)
		require.Equal(t, "NONE", got.VolumeState)
		audit := b.audit(t, ws.ID)
		require.Len(t, audit, events+1, "every volume-state write by a request is audited")
		require.Equal(t, "NONE", audit[events].Metadata["new_state"])
	})

	t.Run("OKMetadataEditAgain", func(t *testing.T) {
		env := ok(t, do(t, http.MethodPut, path+"/volume-metadata", `{"volume_metadata":{"size_bytes":7}}`))
		require.JSONEq(t, `{"size_bytes":7}`, string(decodeWorkspace(t, env.Workspace, b.app).raw["volume_metadata"]))
	})

	t.Run("OKDelete", func(t *testing.T) {
		bare(t, do(t, http.MethodDelete, path, ""))

		fails(t, do(t, http.MethodGet, path, ""), http.StatusNotFound, "workspace_not_found")
		fails(t, do(t, http.MethodPost, path+"/volume", ""), http.StatusNotFound, "workspace_not_found")
		_, exists := b.volumeExists(t, ws.VolumeName)
		require.False(t, exists, "setup on a deleted workspace creates nothing")
		types := b.auditTypes(t, ws.ID)
		require.Equal(t, "DELETE_WORKSPACE", types[len(types)-1])
	})
}

// TestVolumeAdopt creates the volume behind cairn's back, as an operator or
// an older server might have: setup adopts it, keeps its content and fixes
// its root.
func TestVolumeAdopt(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	ws := create(t, u, b, `{"name":"adopted"}`)
	_, err := b.cli.VolumeCreate(t.Context(), volume.CreateOptions{Name: ws.VolumeName, Driver: "local"})
	require.NoError(t, err)
	stacktest.RunInVolume(t, b.app, ws.VolumeName, "echo hi > /mnt/cairn/ws/old && chmod 700 /mnt/cairn/ws")
	_, mounts := get(t, u, b, ws.ID)
	require.Equal(t, -1, mounts, "until adopted, the count agrees with the row's NONE")

	bare(t, do(t, http.MethodPost, u+"/v1/workspaces/"+ws.ID+"/volume", ""))

	got, mounts := get(t, u, b, ws.ID)
	require.Equal(t, "READY", got.VolumeState)
	require.Equal(t, 0, mounts)
	require.Equal(t, "0 0 777", stacktest.RunInVolume(t, b.app, ws.VolumeName, statRoot))
	require.Equal(t, "hi", stacktest.RunInVolume(t, b.app, ws.VolumeName, "cat /mnt/cairn/ws/old"),
		"adopted, not replaced")
	vol, exists := b.volumeExists(t, ws.VolumeName)
	require.True(t, exists)
	require.Empty(t, vol.Labels["cairn.workspace"], "the volume is the one created behind cairn's back")
	require.Equal(t, []string{"NEW_WORKSPACE", "WORKSPACE_VOLUME_STATE"}, b.auditTypes(t, ws.ID))
}
