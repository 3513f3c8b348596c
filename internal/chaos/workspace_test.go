//go:build chaos

package chaos

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// The helpers of the scenarios that move bytes between a client, a
// workspace volume and the store.

// apiClient is a Go client of srv with its admin token.
func apiClient(t *testing.T, srv *stacktest.Server) *client.Client {
	t.Helper()
	c, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	return c
}

func sha256B64(data []byte) string {
	sum := sha256.Sum256(data)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// tarGzFile writes a tar.gz holding one file, name, of size random bytes
// (which do not compress), and returns its path.
func tarGzFile(t *testing.T, name string, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bundle.tar.gz")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	gz := gzip.NewWriter(f)
	tw := tar.NewWriter(gz)
	data := make([]byte, size)
	_, _ = rand.Read(data) // never fails
	require.NoError(t, tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(size), Typeflag: tar.TypeReg}))
	_, err = tw.Write(data)
	require.NoError(t, err)
	require.NoError(t, tw.Close())
	require.NoError(t, gz.Close())
	require.NoError(t, f.Close())
	return path
}

// smallFile writes a few bytes of CSV to a new file named name and returns
// its path.
func smallFile(t *testing.T, name string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(name+"\na,b\n1,2\n"), 0o600))
	return path
}

// upload stores the file at path as the artifact name and records it in
// acked (ID → the SHA-256 the client was told).
func upload(t *testing.T, c *client.Client, workspaceID, path, name string, acked map[string]string) *cairn.Artifact {
	t.Helper()
	a, err := c.Upload(t.Context(), workspaceID, path, client.UploadOptions{Name: name, StateDir: t.TempDir()})
	require.NoError(t, err)
	require.NotNil(t, a.SHA256B64)
	acked[a.ID] = *a.SHA256B64
	return a
}

// requireReason requires err to be the server's refusal with reason and
// that reason's status.
func requireReason(t *testing.T, err error, reason cairn.Reason) {
	t.Helper()
	require.Error(t, err)
	ce, ok := errors.AsType[*cairn.Error](err)
	require.True(t, ok, "a cairn error, not %v", err)
	require.Equal(t, reason, ce.Reason, "%v", err)
	want, _ := reason.HTTPStatus()
	require.Equal(t, want, ce.Status, "%v", err)
}

// runInVolume runs script in a busybox container that mounts volume at
// cairn.MountPath, as a tool container would, without a network (a tool
// needs none here), and returns its output; a non-zero exit fails the
// test. The container is removed before it returns.
func runInVolume(t *testing.T, srv *stacktest.Server, volume, script string) string {
	t.Helper()
	cli := stacktest.Docker(t)
	ctx := context.WithoutCancel(t.Context())
	id := createMounting(t, srv, volume, script)
	defer cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}) //nolint:errcheck // also removed with the app
	results, errs := cli.ContainerWait(ctx, id, container.WaitConditionNotRunning)
	var code int64
	select {
	case r := <-results:
		code = r.StatusCode
	case err := <-errs:
		t.Fatalf("wait for the container: %v", err)
	}
	logs, err := cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	require.NoError(t, err)
	defer logs.Close()
	var out strings.Builder
	_, _ = io.Copy(&out, logs) // the container has exited: its log is complete
	require.Zero(t, code, "%q: %s", script, out.String())
	return strings.TrimSpace(out.String())
}

// keepMounted starts a container that holds volume mounted until stop.
func keepMounted(t *testing.T, srv *stacktest.Server, volume string) (stop func()) {
	t.Helper()
	id := createMounting(t, srv, volume, "sleep 3600")
	return func() {
		err := stacktest.Docker(t).ContainerRemove(context.WithoutCancel(t.Context()), id, container.RemoveOptions{Force: true})
		require.NoError(t, err)
	}
}

// createMounting creates and starts a container of the app running script
// with volume mounted, on no network.
func createMounting(t *testing.T, srv *stacktest.Server, volume, script string) string {
	t.Helper()
	cli := stacktest.Docker(t)
	resp, err := cli.ContainerCreate(t.Context(), &container.Config{
		Image: stacktest.Shell(t), Cmd: []string{"-c", script}, Tty: true,
		Labels: map[string]string{"cairn.app": srv.App},
	}, &container.HostConfig{
		NetworkMode: "none",
		Mounts:      []mount.Mount{{Type: mount.TypeVolume, Source: volume, Target: cairn.MountPath}},
	}, nil, nil, "")
	require.NoError(t, err)
	require.NoError(t, cli.ContainerStart(t.Context(), resp.ID, container.StartOptions{}))
	return resp.ID
}

// listing is what dir of the volume holds, hidden names included, one
// "name size" a line, as a tool container sees it.
func listing(t *testing.T, srv *stacktest.Server, volume, dir string) string {
	t.Helper()
	return runInVolume(t, srv, volume,
		"cd "+dir+" && for f in $(ls -A); do echo \"$f $(stat -c %s \"$f\")\"; done")
}

// readVolumeFile is the content of a volume file, read by a tool container.
func readVolumeFile(t *testing.T, srv *stacktest.Server, volume, path string) string {
	t.Helper()
	return runInVolume(t, srv, volume, "cat "+path)
}

// requireOnlyEntries requires a listing to name exactly names.
func requireOnlyEntries(t *testing.T, list string, names ...string) {
	t.Helper()
	var got []string
	for line := range strings.Lines(list) {
		if f := strings.Fields(line); len(f) > 0 {
			got = append(got, f[0])
		}
	}
	require.ElementsMatch(t, names, got, "the directory holds:\n%s", list)
}
