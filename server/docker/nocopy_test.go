package docker_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// TestMountKeepsTheVolumeRoot: after prep made a fresh volume's root 0777,
// every kind of cairn container mounts it while it is still empty — a
// browse container, a sidecar, and a shell, whose working directory is the
// mount path — and a tool container running as UID 1000 can still create a
// file at its root.
// Docker's copy-up would otherwise stamp the container's directory mode
// (0755 root:root) onto the empty volume at its first mount.
func TestMountKeepsTheVolumeRoot(t *testing.T) {
	t.Parallel()
	r, b := setup(t, docker.Config{})
	ctx := t.Context()
	require.NoError(t, r.CreateVolume(ctx, b.volume, nil, 0))
	run, err := r.RunSidecar(ctx, prepSpec(b))
	require.NoError(t, err)
	require.Equal(t, 0, run.ExitCode, "output: %q", run.Output)

	// A browse container, kept warm while the tool container writes, then
	// stopped. The sidecar image has no directory at the mount path and the
	// mount is read-only, so this step guards against an image that gets
	// one; TestBrowsePosture pins the option itself.
	target := service.BrowseTarget{WorkspaceID: "01JTESTWORKSPACE", VolumeName: b.volume}
	reply, err := r.Browse(ctx, target, sidecar.BrowseRequest{Op: sidecar.OpList, Path: cairn.MountPath})
	require.NoError(t, err)
	require.True(t, reply.OK, "reply: %+v", reply)
	require.Empty(t, reply.Entries)
	requireWritableByOthers(t, b)
	require.NoError(t, r.StopBrowse(ctx, target.WorkspaceID))
	requireWritableByOthers(t, b)

	// A sidecar: a download to a path whose directory is missing fails
	// after the mount, leaving the volume empty.
	spec := prepSpec(b)
	spec.Command, spec.Role = sidecar.CommandDownload, "cairn-download"
	spec.Env = map[string]string{sidecar.EnvMountRoot: cairn.MountPath, sidecar.EnvTargetPath: cairn.MountPath + "/no/such/file",
		sidecar.EnvURL: "http://127.0.0.1:9/never"}
	_, err = r.RunSidecar(ctx, spec)
	require.NoError(t, err)
	requireWritableByOthers(t, b)

	// A shell, whose working directory is the mount path, ending at once.
	s, sb := setupShells(t, docker.ShellConfig{Entrypoint: []string{"/bin/sh", "-c", "true"}})
	sb.volume = b.volume
	conn, _ := serve(t, create(t, s, sb.spec()), ptyshell.Size{Cols: 80, Rows: 24})
	tr := conn.Collect()
	require.Equal(t, 1, tr.Exits, "transcript: %q, err %v", tr.Output, tr.Err)
	requireWritableByOthers(t, b)
}

// requireWritableByOthers checks the volume root is still 0777 and that a
// UID-1000 container creates a file there (removed again, so the volume
// stays empty for the next mount).
func requireWritableByOthers(t *testing.T, b *testBundle) {
	t.Helper()
	require.Equal(t, "0 0 777", stacktest.RunInVolume(t, b.app, b.volume, "stat -c '%u %g %a' "+cairn.MountPath))
	out, code := stacktest.RunInVolumeAs(t, b.app, b.volume, "1000:1000",
		"touch "+cairn.MountPath+"/by-1000 && rm "+cairn.MountPath+"/by-1000 && echo ok")
	require.Equal(t, 0, code, "a UID-1000 tool container cannot write its workspace: %s", out)
	require.Equal(t, "ok", out)
}
