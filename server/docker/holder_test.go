package docker_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/server/docker"
)

// TestHolderContainerSpec: a v2 shell's container keeps the shell
// container's posture — no capability but DAC_OVERRIDE, no new privileges,
// no network, a read-only root, no log driver — runs the holder from its
// read-only volume as its main process under the engine's init, has no
// TTY and no stdin (the holder makes the PTY), and gives the holder a
// private scratch directory.
func TestHolderContainerSpec(t *testing.T) {
	t.Parallel()
	s, b := setupShells(t, docker.ShellConfig{SidecarImage: stacktest.Image(t)})
	spec := b.spec()
	key := sha256.Sum256([]byte("secret"))
	id, err := s.StartHolder(t.Context(), spec, holder.Config{ShellID: spec.ShellID, Cols: 80, Rows: 24,
		Detached: time.Minute, MaxLifetime: time.Hour, Stop: time.Second, Drain: time.Second}, key[:])
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.RemoveContainer(t.Context(), id) })
	info, err := b.cli.ContainerInspect(t.Context(), id)
	require.NoError(t, err)
	cfg, hc := info.Config, info.HostConfig

	require.Equal(t, []string{docker.HolderDir + "/cairn-sidecar", holder.CommandHold}, append([]string(cfg.Entrypoint), cfg.Cmd...))
	require.False(t, cfg.Tty || cfg.OpenStdin || cfg.AttachStdin || cfg.AttachStdout || cfg.AttachStderr)
	require.Equal(t, "0:0", cfg.User)
	var holderEnv int
	for _, kv := range cfg.Env {
		if strings.HasPrefix(kv, "CAIRN_HOLDER_") {
			holderEnv++
		}
		require.NotContains(t, kv, "secret", "the secret itself is never in the container")
	}
	require.Equal(t, 2, holderEnv, "the configuration and the key")

	require.True(t, hc.ReadonlyRootfs)
	require.True(t, *hc.Init)
	require.Equal(t, []string{"ALL"}, capsOf(hc.CapDrop))
	require.Equal(t, []string{"DAC_OVERRIDE"}, capsOf(hc.CapAdd))
	require.Equal(t, []string{"no-new-privileges"}, hc.SecurityOpt)
	require.Equal(t, container.NetworkMode("none"), hc.NetworkMode)
	require.Equal(t, "none", hc.LogConfig.Type)
	require.False(t, hc.Privileged)
	require.Equal(t, "rw,nosuid,nodev,noexec,size=64m,mode=0700,uid=0,gid=0", hc.Tmpfs[holder.DefaultRunDir])
	require.Len(t, hc.Mounts, 2)
	require.Equal(t, mount.Mount{Type: mount.TypeVolume, Source: b.app + ".holder." + imageID(t, b, stacktest.Image(t)),
		Target: docker.HolderDir, ReadOnly: true}, hc.Mounts[1], "the holder's volume, read-only")
}

// imageID is the 12 hex digits of an image's ID that name its holder
// volume.
func imageID(t *testing.T, b *shellBundle, tag string) string {
	img, err := b.cli.ImageInspect(t.Context(), tag)
	require.NoError(t, err)
	return strings.TrimPrefix(img.ID, "sha256:")[:12]
}

// TestHolderVolumeFilledByRacingServers: replicas of one app that start
// their first shells at the same moment each fill the holder volume; every
// holder starts and answers, and the volume ends with the one binary and
// no half-written copy beside it.
func TestHolderVolumeFilledByRacingServers(t *testing.T) {
	t.Parallel()
	first, b := setupShells(t, docker.ShellConfig{SidecarImage: stacktest.Image(t)})
	replicas := []*docker.Shells{first}
	for range 2 {
		replicas = append(replicas, docker.NewShells(b.cli, docker.ShellConfig{AppName: b.app, Image: stacktest.Shell(t),
			Instance: b.instance, SidecarImage: stacktest.Image(t)}))
	}
	key := sha256.Sum256([]byte("secret"))
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(replicas))
	for _, s := range replicas {
		for range 2 {
			wg.Go(func() {
				spec := b.spec()
				id, err := s.StartHolder(t.Context(), spec, holder.Config{ShellID: spec.ShellID, Cols: 80, Rows: 24,
					Detached: time.Minute, MaxLifetime: time.Hour, Stop: time.Second, Drain: time.Second}, key[:])
				if err != nil {
					errs <- err
					return
				}
				t.Cleanup(func() { _ = s.RemoveContainer(context.Background(), id) })
				links := holder.NewLinks(s.DialHolder)
				t.Cleanup(links.Close)
				client := holder.NewClient(links.For(spec.Name), key[:])
				st, err := client.State(t.Context())
				if err == nil && !st.Running {
					err = fmt.Errorf("holder of %s is not running: %+v", spec.ShellID, st)
				}
				errs <- err
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, []string{"cairn-sidecar"}, holderVolumeFiles(t, b, b.app+".holder."+imageID(t, b, stacktest.Image(t))))
}

// holderVolumeFiles lists the names in a holder volume, through a
// container that is created and never started.
func holderVolumeFiles(t *testing.T, b *shellBundle, vol string) []string {
	t.Helper()
	resp, err := b.cli.ContainerCreate(t.Context(), &container.Config{Image: stacktest.Image(t)},
		&container.HostConfig{Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: vol, Target: "/v", ReadOnly: true}}}, nil, nil, "")
	require.NoError(t, err)
	defer func() { _ = b.cli.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}) }()
	rc, _, err := b.cli.CopyFromContainer(t.Context(), resp.ID, "/v/.")
	require.NoError(t, err)
	defer rc.Close()
	var names []string
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return names
		}
		require.NoError(t, err)
		if name := path.Base(hdr.Name); hdr.Typeflag != tar.TypeDir {
			names = append(names, name)
		}
	}
}
