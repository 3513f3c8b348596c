package reconcile_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/reconcile"
	"github.com/cairn-dev/cairn/server/service"
)

// issueRuntime is the Docker runtime answering VolumeIssue with a value the
// test sets, as a Kubernetes one would while a volume's node is cordoned.
type issueRuntime struct {
	*docker.Runtime
	issue atomic.Pointer[cairn.Error]
}

func (r *issueRuntime) VolumeIssue(context.Context, string) (*cairn.Error, error) {
	return r.issue.Load(), nil
}

// TestVolumeIssueSweep: each pass asks about every READY volume; the row
// is written (and audited) only when the answer changes.
func TestVolumeIssueSweep(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	rt := &issueRuntime{Runtime: e.rt}
	e.svc = service.New(e.db, rt, e.store, service.Config{AppName: e.app})
	r := e.reconciler(reconcile.Config{})
	ws := e.workspace(t, cairn.VolumeReady)
	require.NoError(t, e.rt.CreateVolume(ctx, ws.VolumeName, nil, 0))
	t.Cleanup(func() { _ = e.rt.RemoveVolume(context.Background(), ws.VolumeName) })

	stored := func() *cairn.Workspace {
		t.Helper()
		got, err := e.db.FindWorkspace(ctx, ws.ID)
		require.NoError(t, err)
		return got
	}
	audited := func() int {
		t.Helper()
		events, err := e.db.FindAuditEvents(ctx, cairn.AuditFilter{WorkspaceID: ws.ID,
			Types: []cairn.AuditType{cairn.AuditWorkspaceVolumeIssue}})
		require.NoError(t, err)
		for _, ev := range events {
			require.Equal(t, service.MaintainerActor, *ev.Actor)
		}
		return len(events)
	}

	require.Empty(t, pass(t, r).Errors)
	require.Nil(t, stored().VolumeIssue)
	require.Zero(t, audited(), "no issue, nothing written")

	rt.issue.Store(cairn.Errorf(cairn.ReasonVolumeNodeUnavailable, "the workspace's volume is on node n1, which is cordoned"))
	require.Empty(t, pass(t, r).Errors)
	raised := stored()
	require.Equal(t, &cairn.VolumeIssue{Reason: cairn.ReasonVolumeNodeUnavailable,
		Detail: "the workspace's volume is on node n1, which is cordoned"}, raised.VolumeIssue)
	require.Equal(t, 1, audited())

	require.Empty(t, pass(t, r).Errors)
	require.Equal(t, raised, stored(), "the same answer writes nothing")
	require.Equal(t, 1, audited())

	rt.issue.Store(nil)
	require.Empty(t, pass(t, r).Errors)
	require.Nil(t, stored().VolumeIssue)
	require.Equal(t, 2, audited())
}
