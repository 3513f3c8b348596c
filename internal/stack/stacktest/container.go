package stacktest

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/cairn-dev/cairn"
)

// RunInVolume runs a shell command in a busybox container that mounts
// volume at cairn.MountPath, as an agent's tool container would, and returns
// its output. It fails the test on a non-zero exit. The container carries
// app's label, so it is removed with the app.
func RunInVolume(t testing.TB, app, volume, script string) string {
	t.Helper()
	out, code := RunInVolumeAs(t, app, volume, "0:0", script)
	if code != 0 {
		t.Fatalf("container script %q exited %d: %s", script, code, out)
	}
	return out
}

// RunInVolumeAs is RunInVolume as user ("uid:gid"), returning the exit code
// instead of failing on it.
func RunInVolumeAs(t testing.TB, app, volume, user, script string) (string, int) {
	t.Helper()
	out, code := runContainer(t, &container.Config{
		Image: Shell(t), Cmd: []string{"-c", script}, User: user, Tty: true,
		Labels: map[string]string{"cairn.app": app},
	}, &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: cairn.MountPath}},
	})
	return strings.TrimSpace(out), code
}

// runContainer creates, starts and waits for one container, then returns
// its output and exit code; the container is always removed.
func runContainer(t testing.TB, cfg *container.Config, hc *container.HostConfig) (string, int) {
	t.Helper()
	cli := Docker(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := cli.ContainerCreate(ctx, cfg, hc, nil, nil, "")
	if err != nil {
		t.Fatalf("create container: %v", err)
	}
	defer func() {
		if err := cli.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}); err != nil {
			t.Errorf("remove container: %v", err)
		}
	}()
	if err := cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start container: %v", err)
	}
	results, errs := cli.ContainerWait(ctx, resp.ID, container.WaitConditionNotRunning)
	var code int
	select {
	case r := <-results:
		code = int(r.StatusCode)
	case err := <-errs:
		t.Fatalf("wait for container: %v", err)
	}
	logs, err := cli.ContainerLogs(ctx, resp.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		t.Fatalf("container logs: %v", err)
	}
	defer logs.Close()
	var buf bytes.Buffer
	io.Copy(&buf, logs) //nolint:errcheck // best effort: the test reads what arrived
	return buf.String(), code
}

// StartMounting starts a long-running container that mounts volume, and
// returns a function that stops and removes it.
func StartMounting(t testing.TB, app, volume string) (stop func()) {
	t.Helper()
	_, stop = StartInVolume(t, app, volume, "sleep 600")
	return stop
}

// StartInVolume starts script in a container that mounts volume, in the
// background, and returns its ID and a function that stops and removes it.
func StartInVolume(t testing.TB, app, volume, script string) (id string, stop func()) {
	t.Helper()
	cli, image := Docker(t), Shell(t)
	ctx := context.Background()
	resp, err := cli.ContainerCreate(ctx, &container.Config{
		Image: image, Cmd: []string{"-c", script},
		Labels: map[string]string{"cairn.app": app},
	}, &container.HostConfig{
		Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: cairn.MountPath}},
	}, nil, nil, "")
	if err != nil {
		t.Fatalf("create container: %v", err)
	}
	if err := cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		t.Fatalf("start container: %v", err)
	}
	return resp.ID, func() {
		cli.ContainerRemove(context.Background(), resp.ID, container.RemoveOptions{Force: true}) //nolint:errcheck // also removed with the app
	}
}

// RunImage runs image with args (no mounts, no network) and returns its
// output; it fails the test on a non-zero exit.
func RunImage(t testing.TB, image string, args ...string) string {
	t.Helper()
	out, code := runContainer(t, &container.Config{Image: image, Cmd: args, Tty: true},
		&container.HostConfig{NetworkMode: "none"})
	if code != 0 {
		t.Fatalf("%s %v exited %d", image, args, code)
	}
	return out
}
