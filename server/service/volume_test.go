package service_test

import (
	"cmp"
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// prepOK is the output of a successful prep run, with a TTY's line endings.
const prepOK = "\r\n{\"ok\":true,\"prepared_path\":\"/mnt/cairn/ws\"}\r\n"

// volumeRecord is what the runtime fake saw of one volume flow.
type volumeRecord struct {
	created []string
	labels  map[string]string
	sizes   []int64 // asked of each creation
	removed []string
	specs   []service.SidecarSpec
	locked  []bool // whether the workspace lock was held, per runtime write
}

// volume makes the runtime report the volume as present or absent, record
// creations and removals, and answer every sidecar with run.
func (f *fixture) volume(exists bool, run service.SidecarRun) *volumeRecord {
	rec := &volumeRecord{}
	f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) { return exists, nil }
	f.runtime.CreateVolumeFunc = func(_ context.Context, name string, labels map[string]string, sizeBytes int64) error {
		rec.created = append(rec.created, name)
		rec.labels = labels
		rec.sizes = append(rec.sizes, sizeBytes)
		rec.locked = append(rec.locked, f.held)
		return nil
	}
	f.runtime.RemoveVolumeFunc = func(_ context.Context, name string) error {
		rec.removed = append(rec.removed, name)
		rec.locked = append(rec.locked, f.held)
		return nil
	}
	f.runtime.RunSidecarFunc = func(_ context.Context, spec service.SidecarSpec) (*service.SidecarRun, error) {
		rec.specs = append(rec.specs, spec)
		rec.locked = append(rec.locked, f.held)
		return &run, nil
	}
	return rec
}

// requireVolumeState checks the one state write and its audit row.
func requireVolumeState(t *testing.T, f *fixture, ws cairn.Workspace, state cairn.VolumeState) {
	t.Helper()
	want := ws
	want.VolumeState = state
	want.UpdatedAt = f.now
	require.Equal(t, []cairn.Workspace{want}, f.updates)
	require.Len(t, f.audits, 1)
	ev := f.audits[0]
	require.Equal(t, cairn.AuditWorkspaceVolumeState, ev.Type)
	require.Equal(t, map[string]any{
		"workspace_id":   ws.ID,
		"workspace_name": ws.Name,
		"volume_name":    ws.VolumeName,
		"new_state":      string(state),
	}, ev.Metadata)
}

// requireNoStateWrite checks that a failed flow left the column alone and
// released the lock it took.
func requireNoStateWrite(t *testing.T, f *fixture) {
	t.Helper()
	require.Empty(t, f.updates)
	require.Empty(t, f.audits)
	require.Equal(t, []service.LockMode{service.LockExclusive}, f.locks)
	require.Equal(t, 1, f.releases)
	require.False(t, f.held)
}

func TestSetupVolume(t *testing.T) {
	t.Parallel()

	t.Run("OKCreatesAbsentVolume", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.lock()
		rec := f.volume(false, service.SidecarRun{Output: []byte(prepOK)})

		err := svc.SetupVolume(cairn.WithActor(t.Context(), "alice"), ws.ID)
		require.NoError(t, err)
		require.Equal(t, []string{ws.VolumeName}, rec.created)
		require.Equal(t, map[string]string{"cairn.app": appName, "cairn.workspace": ws.ID}, rec.labels)
		require.Equal(t, []int64{0}, rec.sizes, "no size_bytes: the runtime's default size")
		require.Equal(t, []service.SidecarSpec{{
			Command:     "prep",
			Role:        "volume-prep",
			Subject:     ws.ID,
			WorkspaceID: ws.ID,
			VolumeName:  ws.VolumeName,
			Env:         map[string]string{"CAIRN_MOUNT_ROOT": "/mnt/cairn/ws"},
			Transfer:    false,
		}}, rec.specs)
		require.Equal(t, []bool{true, true}, rec.locked, "the volume is created and prepared under the lock")
		require.Equal(t, []service.LockMode{service.LockExclusive}, f.locks)
		require.Equal(t, 1, f.releases)

		requireVolumeState(t, f, ws, cairn.VolumeReady)
		require.Equal(t, new("alice"), f.audits[0].Actor)
	})

	t.Run("OKCreatesSizedVolume", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.runtime.MaxVolume = 8 << 30
		ws := f.newWorkspace(cairn.VolumeNone)
		ws.VolumeMetadata = &cairn.VolumeMetadata{SizeBytes: new(int64(8 << 30))}
		f.row(ws)
		f.lock()
		rec := f.volume(false, service.SidecarRun{Output: []byte(prepOK)})

		require.NoError(t, svc.SetupVolume(t.Context(), ws.ID))
		require.Equal(t, []int64{8 << 30}, rec.sizes, "the volume is made of the workspace's size_bytes")
	})

	t.Run("ErrSizeAboveLoweredBound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.runtime.MaxVolume = 1 << 30 // lowered after the size was stored
		ws := f.newWorkspace(cairn.VolumeNone)
		ws.VolumeMetadata = &cairn.VolumeMetadata{SizeBytes: new(int64(2 << 30))}
		f.row(ws)
		f.lock()
		rec := f.volume(false, service.SidecarRun{Output: []byte(prepOK)})

		err := svc.SetupVolume(t.Context(), ws.ID)
		require.Equal(t, cairn.ReasonInvalidParameters, cairn.ErrorReason(err))
		require.Equal(t, "volume_metadata.size_bytes must be at most 1073741824 (1GiB), the largest volume this server provisions; got 2147483648",
			cairn.ErrorDetail(err))
		require.Empty(t, rec.created, "no volume is made")
		require.Empty(t, rec.specs)
		requireNoStateWrite(t, f)
	})

	t.Run("OKAdoptsExistingVolume", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.lock()
		rec := f.volume(true, service.SidecarRun{Output: []byte(prepOK)})

		err := svc.SetupVolume(t.Context(), ws.ID)
		require.NoError(t, err)
		require.Empty(t, rec.created, "an existing volume is adopted")
		require.Len(t, rec.specs, 1, "an adopted volume is prepared too")
		requireVolumeState(t, f, ws, cairn.VolumeReady)
	})

	t.Run("OKRepeatOnReady", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		rec := f.volume(true, service.SidecarRun{Output: []byte(prepOK)})

		err := svc.SetupVolume(t.Context(), ws.ID)
		require.NoError(t, err)
		require.Len(t, rec.specs, 1, "a repeat repairs the mount root")
		requireVolumeState(t, f, ws, cairn.VolumeReady)
	})

	t.Run("ErrVolumePrepFailed", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name   string
			run    service.SidecarRun
			detail string
		}{
			{
				name: "ResultNotOK",
				run: service.SidecarRun{ExitCode: 1, Output: []byte(
					"\r\n{\"ok\":false,\"error\":\"chmod of the mount root failed: operation not permitted\",\"reason\":\"prep_failed\"}\r\n")},
				detail: `volume preparation sidecar failed (exit code 1); output: {"ok":false,"error":"chmod of the mount root failed: operation not permitted","reason":"prep_failed"}`,
			},
			{
				name:   "ExitCodeDespiteOK",
				run:    service.SidecarRun{ExitCode: 1, Output: []byte(prepOK)},
				detail: `volume preparation sidecar failed (exit code 1); output: {"ok":true,"prepared_path":"/mnt/cairn/ws"}`,
			},
			{
				name:   "NoResultLine",
				run:    service.SidecarRun{ExitCode: 0, Output: []byte("exec /cairn-sidecar: exec format error\r\n")},
				detail: `volume preparation sidecar failed (exit code 0); output: exec /cairn-sidecar: exec format error`,
			},
			{
				name:   "NoResultLineTruncated",
				run:    service.SidecarRun{ExitCode: 137, Output: []byte(strings.Repeat("x", 3000))},
				detail: "volume preparation sidecar failed (exit code 137); output: " + strings.Repeat("x", 2048) + "... (truncated)",
			},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.storedWorkspace(cairn.VolumeNone)
				f.lock()
				f.volume(true, tt.run)

				err := svc.SetupVolume(t.Context(), ws.ID)
				require.Equal(t, cairn.ReasonVolumePrepFailed, cairn.ErrorReason(err))
				require.Equal(t, tt.detail, cairn.ErrorDetail(err))
				requireNoStateWrite(t, f)
			})
		}
	})

	t.Run("ErrRuntime", func(t *testing.T) {
		t.Parallel()
		dockerDown := cairn.Errorf(cairn.ReasonDockerUnavailable, "docker unavailable")
		tests := []struct {
			name    string
			exists  error // from VolumeExists
			create  error // from CreateVolume
			sidecar error // from RunSidecar
		}{
			{name: "DockerUnavailableOnInspect", exists: dockerDown},
			{name: "DockerUnavailableOnCreate", create: dockerDown},
			{name: "DockerUnavailableOnPrep", sidecar: dockerDown},
			{name: "SidecarTimeout", sidecar: cairn.Errorf(cairn.ReasonSidecarTimeout, "sidecar timed out")},
			{name: "SidecarBusy", sidecar: cairn.Errorf(cairn.ReasonSidecarBusy, "too many sidecars")},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.storedWorkspace(cairn.VolumeNone)
				f.lock()
				f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) { return false, tt.exists }
				f.runtime.CreateVolumeFunc = func(context.Context, string, map[string]string, int64) error { return tt.create }
				var removed []string
				f.runtime.RemoveVolumeFunc = func(_ context.Context, name string) error {
					removed = append(removed, name)
					return nil
				}
				f.runtime.RunSidecarFunc = func(context.Context, service.SidecarSpec) (*service.SidecarRun, error) {
					if tt.sidecar != nil {
						return nil, tt.sidecar
					}
					return &service.SidecarRun{Output: []byte(prepOK)}, nil
				}
				want := cmp.Or(tt.exists, tt.create, tt.sidecar)

				err := svc.SetupVolume(t.Context(), ws.ID)
				require.ErrorIs(t, err, want)
				requireNoStateWrite(t, f)
				if tt.exists == nil && tt.create == nil {
					require.Equal(t, []string{ws.VolumeName}, removed, "the volume this setup made goes with its failure")
				} else {
					require.Empty(t, removed)
				}
			})
		}
	})

	t.Run("ErrPrepFailedKeepsAVolumeItFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		f.lock()
		rec := f.volume(true, service.SidecarRun{ExitCode: 1})

		err := svc.SetupVolume(t.Context(), ws.ID)
		require.Equal(t, cairn.ReasonVolumePrepFailed, cairn.ErrorReason(err))
		require.Empty(t, rec.removed, "a volume the setup did not make is never removed")
	})

	t.Run("ErrWorkspaceBusy", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeNone)
		busy := cairn.Errorf(cairn.ReasonWorkspaceBusy, "workspace is busy")
		f.store.LockWorkspaceFunc = func(context.Context, string, service.LockMode) (func(), error) { return nil, busy }
		rec := f.volume(false, service.SidecarRun{Output: []byte(prepOK)})

		err := svc.SetupVolume(t.Context(), ws.ID)
		require.ErrorIs(t, err, busy)
		require.Empty(t, rec.created)
		require.Empty(t, rec.specs)
		require.Empty(t, f.updates)
	})

	t.Run("ErrWorkspaceNotFound", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		f.row(f.newWorkspace(cairn.VolumeNone))
		f.lock()

		err := svc.SetupVolume(t.Context(), uuid.NewString())
		require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
		require.Empty(t, f.locks, "an unknown workspace is refused before locking")
	})
}

func TestTeardownVolume(t *testing.T) {
	t.Parallel()

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.storedWorkspace(cairn.VolumeReady)
		f.lock()
		rec := f.volume(true, service.SidecarRun{})

		err := svc.TeardownVolume(t.Context(), ws.ID)
		require.NoError(t, err)
		require.Equal(t, []string{ws.VolumeName}, rec.removed)
		require.Equal(t, []bool{true}, rec.locked, "the volume is removed under the lock")
		require.Equal(t, []service.LockMode{service.LockExclusive}, f.locks)
		require.Equal(t, 1, f.releases)
		requireVolumeState(t, f, ws, cairn.VolumeNone)
	})

	t.Run("ErrRuntime", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			err  error
		}{
			{"VolumeInUse", cairn.Errorf(cairn.ReasonVolumeInUse,
				"docker volume 'v' is currently mounted and can't be deleted without force")},
			{"DockerUnavailable", cairn.Errorf(cairn.ReasonDockerUnavailable, "docker unavailable")},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				svc, f := setup(t)
				ws := f.storedWorkspace(cairn.VolumeReady)
				f.lock()
				f.runtime.RemoveVolumeFunc = func(context.Context, string) error { return tt.err }

				err := svc.TeardownVolume(t.Context(), ws.ID)
				require.ErrorIs(t, err, tt.err)
				requireNoStateWrite(t, f)
			})
		}
	})
}
