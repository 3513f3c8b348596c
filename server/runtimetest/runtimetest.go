// Package runtimetest is the conformance suite of cairn's runtime
// adapters: the behaviour the service and the reconciler rely on, run
// against a real engine (Docker, or a Kubernetes cluster). An adapter's
// test builds a Harness and calls Run.
package runtimetest

import (
	"cmp"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// Harness is one adapter on a real engine, as the suite drives it. Each
// call of New returns a fresh app: everything it makes is the test's own
// and goes at the test's cleanup.
type Harness struct {
	// New returns the runtimes of a fresh app. Transfer sidecars must
	// reach the suite's HTTP servers at Host. timeout is the sidecar
	// timeout, 0 for the adapter's default.
	New func(t *testing.T, timeout time.Duration) *Subject
	// Host is the address of this machine the suite's HTTP servers listen
	// on, as the engine's transfer sidecars reach it: 127.0.0.1 (the
	// default) from host networking on this machine; an address every node
	// routes to on a cluster of several.
	Host string
}

// Subject is one app's runtimes and the engine-side helpers the suite
// needs to arrange what cairn itself never does.
type Subject struct {
	AppName    string
	Runtime    service.Runtime
	Shells     service.ShellRuntime
	Execs      service.ExecRuntime
	Containers reconcile.Containers
	Volumes    reconcile.VolumeLister
	// Mount runs a workload that is not cairn's, mounting volume, and
	// returns once it runs; stop ends it and returns once it is gone.
	Mount func(t *testing.T, volume string) (stop func())
	// Leak leaves what a crashed server leaves: a running sidecar of the
	// app, labelled as cairn labels its sidecars, mounting volume, that
	// nothing will end. It returns the ID ListSidecars reports.
	Leak func(t *testing.T, volume, workspaceID string) (id string)
	// Logs returns what the engine kept of a shell container's own stdout
	// and stderr; an engine that keeps none checks that it says so.
	Logs func(t *testing.T, container string) []byte
}

// Run runs the whole suite.
func Run(t *testing.T, h Harness) {
	t.Run("Volume", func(t *testing.T) { t.Parallel(); testVolume(t, h) })
	t.Run("Sidecar", func(t *testing.T) { t.Parallel(); testSidecar(t, h) })
	t.Run("Shell", func(t *testing.T) { t.Parallel(); testShell(t, h) })
	t.Run("Holder", func(t *testing.T) { t.Parallel(); testHolder(t, h) })
	t.Run("Exec", func(t *testing.T) { t.Parallel(); testExec(t, h) })
	t.Run("Dialog", func(t *testing.T) { t.Parallel(); testDialog(t, h) })
	t.Run("Sweep", func(t *testing.T) { t.Parallel(); testSweep(t, h) })
	t.Run("Browse", func(t *testing.T) { t.Parallel(); testBrowse(t, h) })
	t.Run("Watch", func(t *testing.T) { t.Parallel(); testWatch(t, h) })
	t.Run("Snapshot", func(t *testing.T) { t.Parallel(); testSnapshot(t, h) })
}

// volumeName is a fresh workspace volume name of app, as the service
// names them (<app>-<workspace ID>).
func volumeName(app string) (name, workspaceID string) {
	id := ulid.Make().String()
	return app + "-" + id, id
}

// provision creates a volume and preps it, as volume setup does.
func provision(t *testing.T, s *Subject) (volume, workspaceID string) {
	t.Helper()
	volume, workspaceID = createVolume(t, s)
	res := runOK(t, s.Runtime, prepSpec(volume, workspaceID))
	require.Equal(t, cairn.MountPath, res.PreparedPath)
	return volume, workspaceID
}

// createVolume creates a volume for a workspace of the app, removed when
// the test ends, and leaves it unprepared.
func createVolume(t *testing.T, s *Subject) (volume, workspaceID string) {
	t.Helper()
	volume, workspaceID = volumeName(s.AppName)
	ctx := t.Context()
	require.NoError(t, s.Runtime.CreateVolume(ctx, volume, map[string]string{"cairn.workspace": workspaceID}, 0))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Runtime.RemoveVolume(ctx, volume); err != nil {
			t.Logf("remove volume %s: %v", volume, err)
		}
	})
	return volume, workspaceID
}

func prepSpec(volume, workspaceID string) service.SidecarSpec {
	return service.SidecarSpec{
		Command: sidecar.CommandPrep, Role: "volume-prep", Subject: workspaceID, WorkspaceID: workspaceID,
		VolumeName: volume, Env: map[string]string{sidecar.EnvMountRoot: cairn.MountPath},
	}
}

// run runs a sidecar and parses its result line.
func run(t *testing.T, r service.Runtime, spec service.SidecarSpec) (*service.SidecarRun, sidecar.Result) {
	t.Helper()
	out, err := r.RunSidecar(t.Context(), spec)
	require.NoError(t, err)
	res, ok := sidecar.ParseResult(out.Output)
	require.True(t, ok, "no result line in %q", out.Output)
	return out, res
}

func runOK(t *testing.T, r service.Runtime, spec service.SidecarSpec) sidecar.Result {
	t.Helper()
	out, res := run(t, r, spec)
	require.Equal(t, 0, out.ExitCode, "output: %q", out.Output)
	require.True(t, res.OK, "output: %q", out.Output)
	return res
}

// store is an HTTP server on the harness's host standing in for presigned URLs: GET
// /obj serves body, PUT /up keeps what it receives, and GET /hang never
// answers (until the test ends).
type store struct {
	URL  string
	body []byte

	mu  sync.Mutex
	put []byte
}

func newStore(t *testing.T, h Harness, body []byte) *store {
	t.Helper()
	l, err := new(net.ListenConfig).Listen(t.Context(), "tcp", net.JoinHostPort(cmp.Or(h.Host, "127.0.0.1"), "0"))
	require.NoError(t, err)
	st := &store{URL: "http://" + l.Addr().String(), body: body}
	hang := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /obj", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(st.body) })
	mux.HandleFunc("PUT /up", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		st.mu.Lock()
		st.put = b
		st.mu.Unlock()
	})
	mux.HandleFunc("GET /hang", func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { close(hang); _ = srv.Close() })
	return st
}

func (st *store) received() []byte {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.put
}
