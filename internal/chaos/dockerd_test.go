//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// bigPutMiB is the size of the file the in-flight put moves: big enough
// that its sidecar still runs when the engine is killed.
const bigPutMiB = 512

// TestDockerdRestart kills the Docker Engine (SIGKILL, a private one)
// under an attached v2 shell, an exec, a warm browse container and a
// volume-to-store put, then starts it again on the same data root. Every
// session ends with a stated reason, the reapers leave no container, the
// workspace works again and nothing leaks.
func TestDockerdRestart(t *testing.T) {
	// The shared engine's client and image come first: they are made from
	// the environment, which from here on names the private engine.
	stacktest.Image(t)
	eng := startPrivateDocker(t)
	eng.loadImages(t)
	t.Setenv("DOCKER_HOST", eng.Host()) // the server finds its engine in the environment
	// A browse container idle for 2 s is retired, so that a warm one is
	// not mistaken for a leftover at the end.
	srv := stacktest.StartServer(t, stacktest.ServerOptions{Config: fmt.Sprintf(
		"shell: {enable: true, image: %s, instanceName: chaos-dockerd, reapIntervalSecs: 1}\nfiles: {browse: {idleSecs: 2}}\n",
		stacktest.ShellImage)})
	cl, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ws, err := cl.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "dockerd-restart"})
	require.NoError(t, err)
	require.NoError(t, cl.SetupVolume(t.Context(), ws.ID))
	execOK(t, cl, ws.ID, fmt.Sprintf("dd if=/dev/urandom of=big bs=1M count=%d 2>/dev/null && echo made", bigPutMiB), "made")
	_, err = cl.ListFiles(t.Context(), ws.ID, cairn.FileListParams{Path: cairn.MountPath}) // starts the warm browse container
	require.NoError(t, err)

	shell := openShell(t, cl, ws.ID)
	exec := startExec(t, cl, ws.ID)
	put := startPut(t, cl, ws.ID, eng, srv.App)

	killed := time.Now()
	eng.kill(t)
	t.Logf("dockerd killed (SIGKILL) with %d sessions and a put in flight", 3)

	shellEnd := shell.lost(t)
	t.Logf("shell: connection lost (%v) after %s", shellEnd.Err, time.Since(killed))
	execEnd := exec.end(t)
	t.Logf("exec: status %+v after %s", execEnd, time.Since(killed))
	putErr := put.end(t)
	t.Logf("put: %v after %s", putErr, time.Since(killed))

	eng.start(t)
	t.Logf("dockerd answers again %s after the kill", time.Since(killed))
	execOK(t, cl, ws.ID, "ls big && echo usable", "usable")
	_, err = cl.ListFiles(t.Context(), ws.ID, cairn.FileListParams{Path: cairn.MountPath})
	require.NoError(t, err, "the files listing works again")
	recovery := time.Since(killed)

	acked := map[string]string{}
	art, err := cl.ArtifactFromVolume(t.Context(), ws.ID, cairn.VolumeArtifactCreate{SourcePath: cairn.MountPath + "/big", Name: "big-again"})
	require.NoError(t, err, "the put works again")
	acked[art.ID] = *art.SHA256B64

	reaped := waitNoContainers(t, eng, srv.App, time.Minute)
	t.Logf("the reapers removed what the engine's death left within %s", reaped)
	sweep(t, srv)
	record(t, Row{Fault: "dockerd kill -9", InFlight: 4, Acknowledged: len(acked), Resumed: 1,
		Lost: lostArtifacts(t, srv, acked), Leaked: leaks(t, srv) + eng.leakedContainers(t, srv.App), Recovery: recovery})
}

// waitNoContainers waits up to limit for the engine to hold no container
// of app and says how long that took; past limit it fails the test,
// naming what is left.
func waitNoContainers(t *testing.T, eng *privateDocker, app string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < limit {
		if len(eng.containers(t, app)) == 0 {
			return time.Since(start)
		}
		time.Sleep(100 * time.Millisecond) // polling the engine: no event says "nothing left"
	}
	eng.leakedContainers(t, app)
	t.FailNow()
	return 0
}

// execOK runs script in the workspace and requires its output to hold want.
func execOK(t *testing.T, cl *client.Client, wsID, script, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out, errOut strings.Builder
	st, err := cl.Exec(ctx, wsID, []string{"sh", "-c", script}, nil, &out, &errOut)
	require.NoError(t, err)
	require.Equal(t, 0, st.ExitCode, "exec %q: %+v, stderr %q", script, st, errOut.String())
	require.Contains(t, out.String(), want)
}

// runningPut is a volume-to-store put in flight.
type runningPut struct {
	done chan struct{}
	err  error
}

// startPut stores the big file as an artifact and returns once its
// sidecar runs on eng.
func startPut(t *testing.T, cl *client.Client, wsID string, eng *privateDocker, app string) *runningPut {
	t.Helper()
	p := &runningPut{done: make(chan struct{})}
	go func() {
		defer close(p.done)
		_, p.err = cl.ArtifactFromVolume(t.Context(), wsID, cairn.VolumeArtifactCreate{SourcePath: cairn.MountPath + "/big", Name: "big"})
	}()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, c := range eng.containers(t, app) {
			if c.Labels["cairn.role"] == "sidecar" && c.Labels["cairn.command"] != "serve" && c.State == "running" {
				return p
			}
		}
		select {
		case <-p.done:
			t.Fatalf("the put ended before its sidecar was seen running: %v", p.err)
		case <-time.After(20 * time.Millisecond): // polling the engine: nothing announces a sidecar's start
		}
	}
	t.Fatal("the put's sidecar did not start")
	return nil
}

// end waits, within sessionBound, for the put's answer, which must be a
// stated failure: the engine died under it.
func (p *runningPut) end(t *testing.T) error {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(sessionBound):
		t.Fatal("the put got no answer")
	}
	require.Error(t, p.err, "the put succeeded though its engine died under it")
	return p.err
}
