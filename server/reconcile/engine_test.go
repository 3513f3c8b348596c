package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/service"
)

func TestVolumeStates(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	e.rt = docker.New(stacktest.Docker(t), docker.Config{AppName: e.app, Image: stacktest.Image(t)})
	e.svc = service.New(e.db, e.rt, e.store, service.Config{AppName: e.app})
	r := e.reconciler(reconcile.Config{})

	vanished := e.workspace(t, cairn.VolumeReady) // its volume was removed behind cairn's back
	adopted := e.workspace(t, cairn.VolumeNone)   // a volume was made for it behind cairn's back
	require.NoError(t, e.rt.CreateVolume(ctx, adopted.VolumeName, nil, 0))
	steady := e.workspace(t, cairn.VolumeNone)
	require.NoError(t, e.rt.CreateVolume(ctx, e.app+"-orphan", nil, 0))

	res := pass(t, r)
	require.Empty(t, res.Errors)
	require.Equal(t, 3, res.VolumesExamined)
	require.Equal(t, 1, res.VolumesAdopted)
	require.Equal(t, 1, res.VolumesCleared)
	require.Equal(t, 1, res.VolumesOrphaned)
	for id, want := range map[string]cairn.VolumeState{
		vanished.ID: cairn.VolumeNone, adopted.ID: cairn.VolumeReady, steady.ID: cairn.VolumeNone,
	} {
		ws, err := e.db.FindWorkspace(ctx, id)
		require.NoError(t, err)
		require.Equal(t, want, ws.VolumeState)
	}
	mode := stacktest.RunInVolume(t, e.app, adopted.VolumeName, "stat -c %a "+cairn.MountPath)
	require.Equal(t, "777", strings.TrimSpace(mode))
	exists, err := e.rt.VolumeExists(ctx, e.app+"-orphan")
	require.NoError(t, err)
	require.True(t, exists, "an orphan volume is never deleted")

	events, err := e.db.FindAuditEvents(ctx, cairn.AuditFilter{Types: []cairn.AuditType{cairn.AuditWorkspaceVolumeState}})
	require.NoError(t, err)
	require.Len(t, events, 2)
	for _, ev := range events {
		require.Equal(t, "maintainer", *ev.Actor)
	}

	res = pass(t, r) // now in line: nothing written
	require.Zero(t, res.VolumesAdopted+res.VolumesCleared)
}

// failingVolumes is an engine whose volume listing fails.
type failingVolumes struct{ reconcile.VolumeReconciler }

func (failingVolumes) ListVolumes(context.Context, string) ([]string, error) {
	return nil, &cairn.Error{Reason: cairn.ReasonDockerUnavailable, Detail: "the docker engine failed to list volumes"}
}

func TestVolumeListingFails(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ws := e.workspace(t, cairn.VolumeReady)
	r := reconcile.New(e.db, e.store, e.rt, failingVolumes{e.svc}, reconcile.Config{AppName: e.app})
	res := pass(t, r)
	require.Zero(t, res.VolumesExamined)
	require.Equal(t, []string{"workspace-volume-states: volume listing failed, nothing written: " +
		"the docker engine failed to list volumes"}, res.Errors)
	got, err := e.db.FindWorkspace(context.Background(), ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeReady, got.VolumeState)
}

func TestLeakedSidecars(t *testing.T) {
	t.Parallel()
	e := setup(t)
	cli := stacktest.Docker(t)
	ctx := context.Background()
	ws := e.workspace(t, cairn.VolumeNone)
	create := func(role string, labels map[string]string) string {
		labels[docker.LabelApp], labels[docker.LabelRole] = e.app, role
		resp, err := cli.ContainerCreate(ctx, &container.Config{Image: stacktest.Shell(t), Cmd: []string{"-c", "true"},
			Labels: labels}, nil, nil, nil, "")
		require.NoError(t, err)
		t.Cleanup(func() { _ = e.rt.RemoveContainer(context.Background(), resp.ID) })
		return resp.ID
	}
	old := create("sidecar", map[string]string{docker.LabelWorkspace: ws.ID})
	ownInstance := create("sidecar", map[string]string{docker.LabelInstance: "this-stack"})
	// Another stack on the same engine with the same app name: neither its
	// instance nor its workspace is ours, so it is never touched.
	foreign := create("sidecar", map[string]string{docker.LabelInstance: "other-stack",
		docker.LabelWorkspace: "00000000-0000-4000-8000-000000000000"})
	shell := create("shell", map[string]string{})
	time.Sleep(2 * time.Second) // engine creation times have one-second resolution
	young := create("sidecar", map[string]string{docker.LabelWorkspace: ws.ID})

	list, err := e.rt.ListSidecars(ctx, e.app)
	require.NoError(t, err)
	require.Len(t, list, 4)
	// The clock is set just past the limit of the latest of the early
	// three (they may straddle a second), which the young one, made two
	// seconds later, cannot have reached.
	var oldCreated time.Time
	for _, c := range list {
		if (c.ID == old || c.ID == ownInstance || c.ID == foreign) && c.Created.After(oldCreated) {
			oldCreated = c.Created
		}
	}
	require.False(t, oldCreated.IsZero())

	const timeout = time.Second // limit: timeout + 60 s
	r := e.reconciler(reconcile.Config{SidecarTimeout: timeout, Instance: "this-stack",
		Now: func() time.Time { return oldCreated.Add(timeout + 60*time.Second + 500*time.Millisecond) }})
	res := pass(t, r)
	require.Equal(t, 2, res.ContainersRemoved)
	list, err = e.rt.ListSidecars(ctx, e.app)
	require.NoError(t, err)
	var left []string
	for _, c := range list {
		left = append(left, c.ID)
	}
	require.ElementsMatch(t, []string{young, foreign}, left)
	_, err = cli.ContainerInspect(ctx, ownInstance)
	require.Error(t, err, "this stack's instance label is its own")
	_, err = cli.ContainerInspect(ctx, shell)
	require.NoError(t, err, "shell containers are left alone for now")
	require.NoError(t, e.rt.RemoveContainer(ctx, old), "an absent container is no error")
}

// The leadership tests time the maintainer's own schedule, in intervals;
// the Postgres work around it is given room for a loaded machine, where a
// query (roundTrip: a ping, a lock try, a new session for a lost one) or
// the first connection (firstLead) can take far longer than on an idle one.
// A takeover that waited for anything slower, a session timeout say,
// would still miss.
const (
	roundTrip = 2 * time.Second
	firstLead = 30 * time.Second
)

func TestLeadership(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const interval = 300 * time.Millisecond
	a := e.reconciler(reconcile.Config{Interval: interval})
	b := e.reconciler(reconcile.Config{Interval: interval})

	actx, cancelA := context.WithCancel(context.Background())
	bctx, cancelB := context.WithCancel(context.Background())
	aDone, bDone := make(chan error, 1), make(chan error, 1)
	go func() { aDone <- a.Run(actx) }()
	require.Eventually(t, a.Leader, firstLead, 10*time.Millisecond)
	go func() { bDone <- b.Run(bctx) }()
	t.Cleanup(func() { cancelB(); requireStopped(t, <-bDone) })

	// Both run for a few intervals: a keeps sweeping, b never leads.
	deadline := time.Now().Add(4 * interval)
	for time.Now().Before(deadline) {
		require.True(t, a.Leader())
		require.False(t, b.Leader())
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(t, a.Ready())

	cancelA()
	require.NoError(t, <-aDone)
	require.False(t, a.Leader())
	start := time.Now()
	require.Eventually(t, b.Leader, 2*interval+roundTrip, 10*time.Millisecond)
	t.Logf("takeover after %s", time.Since(start))
}

func TestSweepBusy(t *testing.T) {
	t.Parallel()
	e := setup(t)
	release, err := e.db.LockPass(context.Background(), e.app)
	require.NoError(t, err)
	r := e.reconciler(reconcile.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = r.RunOnce(ctx, "")
	require.Equal(t, cairn.ReasonSweepBusy, cairn.ErrorReason(err))
	release()
	pass(t, r)
}

func TestLeaderSessionLost(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const interval = 300 * time.Millisecond
	a := e.reconciler(reconcile.Config{Interval: interval})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); requireStopped(t, <-done) })
	require.Eventually(t, a.Leader, firstLead, 10*time.Millisecond)

	conn, err := pgx.Connect(ctx, e.dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`).Scan(&n))
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool { return !a.Leader() }, 3*interval+roundTrip, 10*time.Millisecond)
	require.Eventually(t, a.Leader, 3*interval+roundTrip, 10*time.Millisecond, "it leads again on a new session")
}

func TestSQLErrorStopsPass(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.reconciler(reconcile.Config{})
	pass(t, r)
	require.NoError(t, r.Ready())

	conn, err := pgx.Connect(context.Background(), e.dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `ALTER TABLE released_objects RENAME TO gone`)
	require.NoError(t, err)
	res, err := r.RunOnce(context.Background(), "")
	require.Equal(t, cairn.ReasonInternal, cairn.ErrorReason(err))
	require.NotNil(t, res)
	require.Equal(t, cairn.ReasonNotReady, cairn.ErrorReason(r.Ready()))

	_, err = conn.Exec(context.Background(), `ALTER TABLE gone RENAME TO released_objects`)
	require.NoError(t, err)
	pass(t, r)
	require.NoError(t, r.Ready())
}

// requireStopped checks how a reconciler loop ended once its context was
// cancelled: cleanly, or with that cancellation.
func requireStopped(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("reconciler loop: %v", err)
	}
}
