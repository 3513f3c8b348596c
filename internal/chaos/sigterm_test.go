//go:build chaos

package chaos

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/wsexec"
)

// The SIGTERM scenario's upload: big enough that the server's register
// (assembling the parts, then hashing the object) is still running when
// the signal arrives, small enough to fit in the grace.
const (
	termFile  = 1 << 30
	termPart  = 256 << 20
	termGrace = 30
)

// SIGTERM of a server with a v2 shell attached, an exec running and an
// upload's register in flight: the server stops accepting connections at
// once, lets the register finish within server.shutdownGraceSecs, ends
// the exec with reason server_shutdown, removes its container, cuts the
// shell's connection — the shell lives on in its container — and exits 0.
// A request sent during the stop is refused, not left hanging. After the
// restart the shell is attached again, its screen as it was.
func TestServerSIGTERMDrains(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MultipartThreshold: termPart, PartSize: termPart,
		MaxObjectSize: 2 << 30, Config: fmt.Sprintf("shell: {enable: true, image: %s}\nserver: {shutdownGraceSecs: %d}\n",
			stacktest.Shell(t), termGrace)})
	user := newCLIUser(t, srv)
	var ws struct{ Workspace cairn.Workspace }
	user.ok(t, "ws", "create", "term-"+srv.App, "-o", "json").json(t, &ws)
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	require.NoError(t, api.SetupVolume(t.Context(), ws.Workspace.ID))

	shell := openShell(t, api, ws.Workspace.ID)
	exec := startExec(t, api, ws.Workspace.ID)
	src := filepath.Join(t.TempDir(), "big.bin")
	digest := stacktest.RandomFile(t, src, 0x7e, termFile)
	upload := user.start(t, "art", "upload", ws.Workspace.Name, src, "--name", "big", "--multipart-above", "256MiB", "-o", "json")
	waitRegistering(t, srv, upload)

	signalled := time.Now()
	exited := make(chan int, 1)
	go func() { exited <- srv.Terminate(t) }()
	drain := probeDrain(t, srv, exited, exec.done)
	code := <-exited
	stopped := time.Since(signalled)
	t.Logf("exit %d after %s; first refusal %s after the signal (%s), %d requests served before it",
		code, stopped.Round(time.Millisecond), drain.refusedAfter.Round(time.Millisecond), drain.refusal, drain.served)
	require.Equal(t, 0, code, "a drained server exits 0; output:\n%s", srv.Output())

	// What each client saw.
	require.True(t, drain.refusedBeforeExecEnded, "a request during the stop was refused while the exec was still ending")
	shell.lost(t)
	require.Equal(t, wsexec.ReasonServerShutdown, exec.end(t).Reason)
	require.Equal(t, 0, upload.wait(), "the register in flight finished within the grace: %s", upload.stderr)
	var out struct{ Artifact cairn.Artifact }
	upload.json(t, &out)
	require.Equal(t, digest, *out.Artifact.SHA256B64)
	srv.Restart(t, stacktest.ServerOptions{MultipartThreshold: termPart, PartSize: termPart, MaxObjectSize: 2 << 30,
		Config: fmt.Sprintf("shell: {enable: true, image: %s}\n", stacktest.Shell(t))})
	recovery := time.Since(signalled)
	api, err = client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	back, err := api.AttachShell(t.Context(), shell.info.ShellID, shell.info.Secret, ptyshell.Size{Cols: 80, Rows: 24})
	require.NoError(t, err, "the shell outlived its server")
	readUntil(t, back, "ready-42") // the screen's render
	require.NoError(t, back.Close())
	require.NoError(t, api.KillShell(t.Context(), shell.info.ShellID))
	containers := leakedContainers(t, srv.App)
	lost := lostArtifacts(t, srv, map[string]string{out.Artifact.ID: digest})
	sweep(t, srv)
	leaked := leaks(t, srv)
	record(t, Row{Fault: "SIGTERM server (shell, exec, upload)", InFlight: 3, Acknowledged: 1, Resumed: 1,
		Lost: lost, Leaked: containers + leaked, Recovery: recovery})
}

// waitRegistering waits until the upload's parts are all stored and the
// store has assembled them — the multipart upload is gone from the
// store's listing — while the command still runs: the server is then
// inside the register, hashing the object.
func waitRegistering(t *testing.T, srv *stacktest.Server, upload *run) {
	t.Helper()
	store := srv.S3.Client()
	seen := false
	deadline := time.Now().Add(5 * time.Minute)
	for {
		require.True(t, upload.running(), "the upload ended before the signal: %s", upload.stderr)
		require.True(t, time.Now().Before(deadline), "the upload was not registered in time")
		out, err := store.ListMultipartUploads(t.Context(), &awss3.ListMultipartUploadsInput{Bucket: aws.String(srv.Bucket)})
		require.NoError(t, err)
		switch {
		case len(out.Uploads) > 0:
			seen = true
		case seen:
			return
		}
		time.Sleep(5 * time.Millisecond) // polling the store's listing: nothing else announces it
	}
}

// drainView is what requests sent during the stop met.
type drainView struct {
	served                 int           // answered as usual, before the first refusal
	refusal                string        // how the first refusal looked
	refusedAfter           time.Duration // from the signal to the first refusal
	refusedBeforeExecEnded bool          // the exec had not ended yet then
}

// probeDrain sends one request after another on fresh connections until
// the server exits, each bounded so that a hang fails the test, and
// reports when the first was refused.
func probeDrain(t *testing.T, srv *stacktest.Server, exited chan int, execDone <-chan struct{}) drainView {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	var v drainView
	for {
		select {
		case code := <-exited:
			exited <- code // the caller reads it too
			require.NotEmpty(t, v.refusal, "no request was refused before the server exited")
			return v
		default:
		}
		refusal, served := probe(t, hc, srv)
		if served {
			v.served++
			continue
		}
		if v.refusal == "" {
			v.refusal, v.refusedAfter = refusal, time.Since(start)
			select {
			case <-execDone:
			default:
				v.refusedBeforeExecEnded = true
			}
		}
		time.Sleep(20 * time.Millisecond) // pacing the probes, not waiting for anything
	}
}

// probe sends GET /v1/workspaces; it reports a refusal (a refused
// connection, a reset one, or 503 server_shutting_down), or that it was
// served. A reset, or a connection closed with no answer, is a refusal
// too: the kernel resets the connections still queued for accept when the
// listener closes, and net/http closes unanswered a connection whose first
// request it reads once its shutdown has begun — in neither case has a
// handler seen the request. (A request a handler took would be answered:
// these take milliseconds, and the grace is termGrace.) Any other outcome
// — a timeout above all — fails the test.
func probe(t *testing.T, hc *http.Client, srv *stacktest.Server) (string, bool) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/workspaces", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+srv.Token)
	resp, err := hc.Do(req)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused", false
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset (queued as the listener closed)", false
	case errors.Is(err, io.EOF):
		return "connection closed unanswered (read as the shutdown began)", false
	}
	require.NoError(t, err, "a request during the stop neither hangs nor breaks off")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == http.StatusOK:
		return "", true
	case resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), string(cairn.ReasonServerShuttingDown)):
		return "503 server_shutting_down", false
	}
	t.Fatalf("a request during the stop got %d: %s", resp.StatusCode, body)
	return "", false
}
