package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

// cordoned is what a runtime reports of a volume whose node is cordoned.
var cordoned = cairn.Errorf(cairn.ReasonVolumeNodeUnavailable,
	"the workspace's volume is on node n1, which is cordoned; its pods can run only there, once it takes pods again")

// reconcileIssue runs ReconcileVolume on a READY workspace holding stored
// as its issue, with the runtime answering found (or failing with err).
func reconcileIssue(t *testing.T, stored *cairn.VolumeIssue, found *cairn.Error, err error) (
	*fixture, cairn.Workspace, service.VolumeCorrection, error) {
	t.Helper()
	svc, f := setup(t)
	ws := f.newWorkspace(cairn.VolumeReady)
	ws.VolumeIssue = stored
	f.row(ws)
	f.store.TryLockWorkspaceFunc = func(context.Context, string) (func(), bool, error) { return func() {}, true, nil }
	f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) { return true, nil }
	f.runtime.VolumeIssueFunc = func(_ context.Context, name string) (*cairn.Error, error) {
		require.Equal(t, ws.VolumeName, name)
		return found, err
	}
	corr, rerr := svc.ReconcileVolume(t.Context(), ws.ID)
	return f, ws, corr, rerr
}

// requireIssueWrite checks the one row write and its maintainer audit row.
func requireIssueWrite(t *testing.T, f *fixture, ws cairn.Workspace, issue *cairn.VolumeIssue) {
	t.Helper()
	want := ws
	want.VolumeIssue, want.UpdatedAt = issue, f.now
	require.Equal(t, []cairn.Workspace{want}, f.updates, "one write, so one workspace.upserted")
	require.Len(t, f.audits, 1)
	require.Equal(t, cairn.AuditWorkspaceVolumeIssue, f.audits[0].Type)
	require.Equal(t, new(service.MaintainerActor), f.audits[0].Actor)
	meta := map[string]any{"workspace_id": ws.ID, "workspace_name": ws.Name, "volume_name": ws.VolumeName,
		"reason": nil, "detail": nil}
	if issue != nil {
		meta["reason"], meta["detail"] = string(issue.Reason), issue.Detail
	}
	require.Equal(t, meta, f.audits[0].Metadata)
}

func TestReconcileVolumeIssue(t *testing.T) {
	t.Parallel()
	issue := &cairn.VolumeIssue{Reason: cordoned.Reason, Detail: cordoned.Detail}

	t.Run("OKRaisedIsStored", func(t *testing.T) {
		t.Parallel()
		f, ws, corr, err := reconcileIssue(t, nil, cordoned, nil)
		require.NoError(t, err)
		require.Equal(t, service.VolumeIssueRaised, corr)
		requireIssueWrite(t, f, ws, issue)
	})

	t.Run("OKUnchangedWritesNothing", func(t *testing.T) {
		t.Parallel()
		f, _, corr, err := reconcileIssue(t, &cairn.VolumeIssue{Reason: issue.Reason, Detail: issue.Detail}, cordoned, nil)
		require.NoError(t, err)
		require.Equal(t, service.VolumeUnchanged, corr)
		require.Empty(t, f.updates)
		require.Empty(t, f.audits)
	})

	t.Run("OKNoneStaysNone", func(t *testing.T) {
		t.Parallel()
		f, _, corr, err := reconcileIssue(t, nil, nil, nil)
		require.NoError(t, err)
		require.Equal(t, service.VolumeUnchanged, corr)
		require.Empty(t, f.updates)
	})

	t.Run("OKChangedDetailIsStored", func(t *testing.T) {
		t.Parallel()
		notReady := cairn.Errorf(cairn.ReasonVolumeNodeUnavailable, "the workspace's volume is on node n1, which is not ready")
		f, ws, corr, err := reconcileIssue(t, issue, notReady, nil)
		require.NoError(t, err)
		require.Equal(t, service.VolumeIssueRaised, corr)
		requireIssueWrite(t, f, ws, &cairn.VolumeIssue{Reason: notReady.Reason, Detail: notReady.Detail})
	})

	t.Run("OKResolvedIsCleared", func(t *testing.T) {
		t.Parallel()
		f, ws, corr, err := reconcileIssue(t, issue, nil, nil)
		require.NoError(t, err)
		require.Equal(t, service.VolumeIssueResolved, corr)
		requireIssueWrite(t, f, ws, nil)
	})

	t.Run("ErrRuntimeLeavesTheIssue", func(t *testing.T) {
		t.Parallel()
		down := cairn.Errorf(cairn.ReasonDockerUnavailable, "the kubernetes API failed to list pods")
		f, _, corr, err := reconcileIssue(t, issue, nil, down)
		require.Equal(t, cairn.ReasonDockerUnavailable, cairn.ErrorReason(err))
		require.Equal(t, service.VolumeUnchanged, corr)
		require.Empty(t, f.updates)
		require.Empty(t, f.audits)
	})

	t.Run("OKVanishedVolumeClearsTheIssue", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.newWorkspace(cairn.VolumeReady)
		ws.VolumeIssue = issue
		f.row(ws)
		f.store.TryLockWorkspaceFunc = func(context.Context, string) (func(), bool, error) { return func() {}, true, nil }
		f.runtime.VolumeExistsFunc = func(context.Context, string) (bool, error) { return false, nil }

		corr, err := svc.ReconcileVolume(t.Context(), ws.ID)
		require.NoError(t, err)
		require.Equal(t, service.VolumeCleared, corr)
		require.Len(t, f.updates, 1)
		require.Equal(t, cairn.VolumeNone, f.updates[0].VolumeState)
		require.Nil(t, f.updates[0].VolumeIssue, "no volume, no issue")
	})

	t.Run("OKTeardownClearsTheIssue", func(t *testing.T) {
		t.Parallel()
		svc, f := setup(t)
		ws := f.newWorkspace(cairn.VolumeReady)
		ws.VolumeIssue = issue
		f.row(ws)
		f.lock()
		f.volume(true, service.SidecarRun{})

		require.NoError(t, svc.TeardownVolume(t.Context(), ws.ID))
		require.Len(t, f.updates, 1)
		require.Nil(t, f.updates[0].VolumeIssue)
	})
}
