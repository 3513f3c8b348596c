package docker

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// setupInternal returns a Runtime on the real engine for a unique app, with
// the current sidecar image.
func setupInternal(t *testing.T, cfg Config) (*Runtime, string) {
	t.Helper()
	cli := stacktest.Docker(t)
	app := stacktest.AppName(t)
	cfg.AppName, cfg.Image = app, stacktest.Image(t)
	return New(cli, cfg), app
}

// inspectCreated creates the sidecar of spec without starting it and
// returns its inspection; the container is removed at cleanup.
func inspectCreated(t *testing.T, r *Runtime, spec service.SidecarSpec) container.InspectResponse {
	t.Helper()
	ctx := t.Context()
	id, err := r.createSidecar(ctx, spec)
	require.NoError(t, err)
	t.Cleanup(func() { r.removeContainer(context.Background(), id) })
	info, err := r.cli.ContainerInspect(ctx, id)
	require.NoError(t, err)
	return info
}

var ulidPattern = `[0-9A-HJKMNP-TV-Z]{26}`

// caps strips the CAP_ prefix some engines add on inspect.
func caps(list []string) []string {
	var out []string
	for _, c := range list {
		out = append(out, strings.TrimPrefix(c, "CAP_"))
	}
	return out
}

func TestSidecarPosture(t *testing.T) {
	t.Parallel()

	// requireCommon checks what every sidecar has, whatever its command.
	requireCommon := func(t *testing.T, r *Runtime, app string, spec service.SidecarSpec, info container.InspectResponse) {
		t.Helper()
		cfg, hc := info.Config, info.HostConfig
		require.Regexp(t, "^/"+regexp.QuoteMeta(app+"."+spec.Role+"."+spec.Subject+".")+ulidPattern+"$", info.Name)
		require.Equal(t, r.cfg.Image, cfg.Image)
		require.Equal(t, []string{"/cairn-sidecar"}, []string(cfg.Entrypoint))
		require.Equal(t, []string{spec.Command}, []string(cfg.Cmd))
		require.Equal(t, "0:0", cfg.User)
		require.Equal(t, "/", cfg.WorkingDir)
		require.Equal(t, "SIGINT", cfg.StopSignal)
		require.True(t, cfg.Tty)
		require.Contains(t, cfg.Env, sidecar.EnvMountRoot+"="+cairn.MountPath)
		for k, v := range map[string]string{
			LabelApp: app, LabelRole: "sidecar", LabelSidecar: "true",
			LabelCommand: spec.Command, LabelWorkspace: spec.WorkspaceID,
		} {
			require.Equal(t, v, cfg.Labels[k], "label %s", k)
		}

		require.Equal(t, []string{"ALL"}, caps(hc.CapDrop))
		require.Equal(t, []string{"no-new-privileges"}, hc.SecurityOpt)
		require.True(t, hc.ReadonlyRootfs)
		require.False(t, hc.Privileged)
		require.False(t, hc.AutoRemove)
		require.Empty(t, hc.Binds)
		require.Empty(t, hc.Tmpfs)
		require.Equal(t, int64(128<<20), hc.Memory)
		require.Equal(t, int64(32<<20), hc.MemoryReservation)
		require.NotNil(t, hc.PidsLimit)
		require.Positive(t, *hc.PidsLimit)

		require.Equal(t, []mount.Mount{{Type: mount.TypeVolume, Source: spec.VolumeName, Target: cairn.MountPath,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}, hc.Mounts, "one mount, without copy-up")
		require.Len(t, info.Mounts, 1)
		require.Equal(t, mount.TypeVolume, info.Mounts[0].Type)
		require.Equal(t, spec.VolumeName, info.Mounts[0].Name)
		require.Equal(t, cairn.MountPath, info.Mounts[0].Destination)
		require.True(t, info.Mounts[0].RW)
	}

	newSpec := func(app, command, role string, transfer bool) service.SidecarSpec {
		env := map[string]string{sidecar.EnvMountRoot: cairn.MountPath}
		if command != sidecar.CommandPrep {
			env[sidecar.EnvSourcePath] = cairn.MountPath + "/out.txt"
		}
		return service.SidecarSpec{
			Command: command, Role: role, Subject: "01JTESTSUBJECT", WorkspaceID: "01JTESTWORKSPACE",
			VolumeName: app + "-ws", Env: env, Transfer: transfer,
		}
	}
	extras := Config{ExtraEnv: map[string]string{"HTTPS_PROXY": "http://proxy.test:3128"},
		ExtraHosts: []string{"store.test:10.1.2.3"}}

	t.Run("PrepNoCapsNetworkNone", func(t *testing.T) {
		t.Parallel()
		r, app := setupInternal(t, extras)
		spec := newSpec(app, sidecar.CommandPrep, "volume-prep", false)

		info := inspectCreated(t, r, spec)
		requireCommon(t, r, app, spec, info)
		require.Empty(t, info.HostConfig.CapAdd)
		require.Equal(t, container.NetworkMode("none"), info.HostConfig.NetworkMode)
		require.Empty(t, info.HostConfig.ExtraHosts)
		require.NotContains(t, info.Config.Env, "HTTPS_PROXY=http://proxy.test:3128")
	})

	t.Run("NoTransferDACOverrideNetworkNone", func(t *testing.T) {
		t.Parallel()
		// Any command but prep reads users' files; only a transfer gets a
		// network and the extras.
		r, app := setupInternal(t, extras)
		spec := newSpec(app, sidecar.CommandPut, "cairn-upload", false)

		info := inspectCreated(t, r, spec)
		requireCommon(t, r, app, spec, info)
		require.Equal(t, []string{"DAC_OVERRIDE"}, caps(info.HostConfig.CapAdd))
		require.Equal(t, container.NetworkMode("none"), info.HostConfig.NetworkMode)
		require.Empty(t, info.HostConfig.ExtraHosts)
		require.NotContains(t, info.Config.Env, "HTTPS_PROXY=http://proxy.test:3128")
	})

	t.Run("TransferDefaultBridgeWithExtras", func(t *testing.T) {
		t.Parallel()
		r, app := setupInternal(t, extras)
		spec := newSpec(app, sidecar.CommandPut, "cairn-upload", true)

		info := inspectCreated(t, r, spec)
		requireCommon(t, r, app, spec, info)
		require.Equal(t, []string{"DAC_OVERRIDE"}, caps(info.HostConfig.CapAdd))
		require.Equal(t, container.NetworkMode("bridge"), info.HostConfig.NetworkMode)
		require.Equal(t, []string{"store.test:10.1.2.3"}, info.HostConfig.ExtraHosts)
		require.Contains(t, info.Config.Env, "HTTPS_PROXY=http://proxy.test:3128")
	})

	t.Run("TransferConfiguredNetwork", func(t *testing.T) {
		t.Parallel()
		r, app := setupInternal(t, Config{NetworkMode: "host"})
		spec := newSpec(app, sidecar.CommandDownload, "cairn-download", true)

		info := inspectCreated(t, r, spec)
		requireCommon(t, r, app, spec, info)
		require.Equal(t, container.NetworkMode("host"), info.HostConfig.NetworkMode)
	})
}

func TestDialogSidecarPosture(t *testing.T) {
	t.Parallel()
	// A dialog run is a sidecar like any other, attached without a TTY.
	r, app := setupInternal(t, Config{})
	spec := service.SidecarSpec{Command: sidecar.CommandPack, Role: "cairn-pack", Subject: "01JTESTSUBJECT",
		WorkspaceID: "01JTESTWORKSPACE", VolumeName: app + "-ws", Transfer: true,
		Env:    map[string]string{sidecar.EnvMountRoot: cairn.MountPath},
		Dialog: func(context.Context, sidecar.Need) (sidecar.Grant, error) { return sidecar.Grant{}, nil }}

	info := inspectCreated(t, r, spec)
	cfg, hc := info.Config, info.HostConfig
	require.False(t, cfg.Tty)
	require.True(t, cfg.OpenStdin)
	require.True(t, cfg.StdinOnce, "the sidecar reads end of file when the server lets go")
	require.True(t, cfg.AttachStdin && cfg.AttachStdout && cfg.AttachStderr)
	require.Equal(t, "0:0", cfg.User)
	require.Equal(t, []string{"DAC_OVERRIDE"}, caps(hc.CapAdd))
	require.Equal(t, []string{"ALL"}, caps(hc.CapDrop))
	require.True(t, hc.ReadonlyRootfs)
	require.False(t, hc.AutoRemove, "RunSidecar removes it")
	require.Equal(t, container.NetworkMode("bridge"), hc.NetworkMode)
}

func TestBrowsePosture(t *testing.T) {
	t.Parallel()
	r, b := setupBrowse(t, Config{Instance: "posture", BrowseIdle: 90 * time.Second, Timeout: 200 * time.Second})
	list(t, r, b.target, cairn.MountPath)
	info, err := b.cli.ContainerInspect(t.Context(), browsersOf(t, b.cli, b.app)[b.target.WorkspaceID])
	require.NoError(t, err)
	cfg, hc := info.Config, info.HostConfig

	require.Regexp(t, "^/"+regexp.QuoteMeta(b.app+".browse."+b.target.WorkspaceID+".")+ulidPattern+"$", info.Name)
	require.Equal(t, r.cfg.Image, cfg.Image)
	require.Equal(t, []string{"/cairn-sidecar"}, []string(cfg.Entrypoint))
	require.Equal(t, []string{sidecar.CommandServe}, []string(cfg.Cmd))
	require.Equal(t, "0:0", cfg.User)
	require.Equal(t, "/", cfg.WorkingDir)
	require.False(t, cfg.Tty, "stdout and stderr apart")
	require.True(t, cfg.OpenStdin)
	require.True(t, cfg.StdinOnce, "the sidecar reads end of file when the server drops the stream")
	require.Subset(t, cfg.Env, []string{
		sidecar.EnvMountRoot + "=" + cairn.MountPath,
		sidecar.EnvIdleSecs + "=180",     // twice the idle: the server's reaper goes first
		sidecar.EnvLifetimeSecs + "=200", // the sidecar timeout: the maintainer's sweep never meets a live one
	})
	for k, v := range map[string]string{
		LabelApp: b.app, LabelRole: "sidecar", LabelSidecar: "true", LabelInstance: "posture",
		LabelCommand: sidecar.CommandServe, LabelWorkspace: b.target.WorkspaceID,
	} {
		require.Equal(t, v, cfg.Labels[k], "label %s", k)
	}

	require.Equal(t, []string{"ALL"}, caps(hc.CapDrop))
	require.Equal(t, []string{"DAC_READ_SEARCH"}, caps(hc.CapAdd), "reads every file, writes none")
	require.Equal(t, []string{"no-new-privileges"}, hc.SecurityOpt)
	require.True(t, hc.ReadonlyRootfs)
	require.False(t, hc.Privileged)
	require.True(t, hc.AutoRemove, "a container that exits by itself leaves nothing behind")
	require.Equal(t, container.NetworkMode("none"), hc.NetworkMode)
	require.Empty(t, hc.Binds)
	require.Empty(t, hc.Tmpfs)
	require.Equal(t, int64(128<<20), hc.Memory)
	require.NotNil(t, hc.PidsLimit)
	require.Positive(t, *hc.PidsLimit)

	require.Equal(t, []mount.Mount{{Type: mount.TypeVolume, Source: b.target.VolumeName, Target: cairn.MountPath,
		ReadOnly: true, VolumeOptions: &mount.VolumeOptions{NoCopy: true}}}, hc.Mounts, "one mount, read-only, without copy-up")
	require.Len(t, info.Mounts, 1)
	require.Equal(t, b.target.VolumeName, info.Mounts[0].Name)
	require.Equal(t, cairn.MountPath, info.Mounts[0].Destination)
	require.False(t, info.Mounts[0].RW)
}

func TestEnv(t *testing.T) {
	t.Parallel()
	r := New(nil, Config{ExtraEnv: map[string]string{"NO_PROXY": "store", "HTTPS_PROXY": "http://p:1"}})
	spec := map[string]string{sidecar.EnvMountRoot: cairn.MountPath, sidecar.EnvSourcePath: "/mnt/cairn/ws/a"}

	for _, tt := range []struct {
		name     string
		transfer bool
		want     []string
	}{
		{"NoExtrasWithoutTransfer", false, []string{
			"CAIRN_MOUNT_ROOT=/mnt/cairn/ws", "CAIRN_SOURCE_PATH=/mnt/cairn/ws/a",
		}},
		{"ExtrasSortedWithTransfer", true, []string{
			"CAIRN_MOUNT_ROOT=/mnt/cairn/ws", "CAIRN_SOURCE_PATH=/mnt/cairn/ws/a",
			"HTTPS_PROXY=http://p:1", "NO_PROXY=store",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, r.env(service.SidecarSpec{Env: spec, Transfer: tt.transfer}))
		})
	}
}

func TestTakeSlot(t *testing.T) {
	t.Parallel()

	t.Run("ErrSidecarBusyUntilReleased", func(t *testing.T) {
		t.Parallel()
		// No engine is reached: the slot is taken before anything else.
		cli, err := client.NewClientWithOpts(client.WithHost("unix:///nonexistent.sock"), client.WithAPIVersionNegotiation())
		require.NoError(t, err)
		r := New(cli, Config{MaxConcurrent: 1})
		release, err := service.TakeSidecarSlot(t.Context(), r.slots)
		require.NoError(t, err)

		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		run, err := r.RunSidecar(ctx, service.SidecarSpec{Command: sidecar.CommandPrep})
		require.Nil(t, run)
		require.Equal(t, cairn.ReasonSidecarBusy, cairn.ErrorReason(err), "err: %v", err)

		release()
		again, err := service.TakeSidecarSlot(t.Context(), r.slots)
		require.NoError(t, err, "a released slot is free again")
		again()
	})
}
