package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/server/service/webhook"
)

// lifecycleWarn is the warning window of the lifecycle tests.
const lifecycleWarn = 2 * time.Second

// lifecycleServer is a server with a short warning window and a webhook
// for the lifecycle's events.
func lifecycleServer(t *testing.T) (*client.Client, *receiver, string) {
	t.Helper()
	hook := newReceiver(t, always(http.StatusNoContent))
	cfg, secrets := testConfig(t)
	cfg.Lifecycle.WarnBeforeSecs = int(lifecycleWarn / time.Second)
	cfg.Webhooks = []server.WebhookConfig{{Name: "life", URL: hook.url, SecretFile: secretFile(t, "sixteen bytes at least"),
		Events: []string{"workspace.expiring", "workspace.archiving", "workspace.deleted"}}}
	srv := startServer(t, cfg, secrets, nil)
	api, err := client.New("http://" + srv.APIAddr())
	require.NoError(t, err)
	return api, hook, cfg.AppName
}

func sweep(t *testing.T, api *client.Client) *cairn.SweepResult {
	t.Helper()
	res, err := api.Sweep(t.Context(), "")
	require.NoError(t, err)
	require.Empty(t, res.Errors)
	return res
}

// sweepUntil runs passes until done says the pass did what it waited for,
// failing after a minute; the lifecycle acts on wall-clock windows, so
// only passes run after the window can.
func sweepUntil(t *testing.T, api *client.Client, what string, done func(*cairn.SweepResult) bool) {
	t.Helper()
	require.Eventually(t, func() bool { return done(sweep(t, api)) }, time.Minute, 100*time.Millisecond, what)
}

// auditedAt is when the workspace's last audit event of typ was recorded.
func auditedAt(t *testing.T, api *client.Client, wsID string, typ cairn.AuditType) time.Time {
	t.Helper()
	list, err := api.FindAuditEvents(t.Context(), cairn.AuditFilter{WorkspaceID: wsID, Types: []cairn.AuditType{typ}, Newest: true})
	require.NoError(t, err)
	require.NotEmpty(t, list, "no %s of %s", typ, wsID)
	return list[0].CreatedAt
}

func awaitEvent(t *testing.T, hook *receiver, typ cairn.EventType, id string) posted {
	t.Helper()
	return hook.await(t, string(typ)+" of "+id, func(p posted) bool { return p.event.Type == typ && p.event.ID == id })
}

// TestLifecycleExpiry: an expiring workspace is warned of first, on the
// webhook and the stream; a touch withdraws the warning and postpones the
// expiry; the workspace is deleted only once its warning is the window old.
func TestLifecycleExpiry(t *testing.T) {
	t.Parallel()
	api, hook, _ := lifecycleServer(t)
	ctx := t.Context()
	ttl := int64(1)
	ws, err := api.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "short", Lifecycle: cairn.Lifecycle{TTLSecs: &ttl}})
	require.NoError(t, err)
	require.Equal(t, ttl, *ws.TTLSecs)
	require.WithinDuration(t, ws.CreatedAt.Add(time.Second), *ws.ExpiresAt, time.Millisecond)

	res := sweep(t, api)
	require.Equal(t, 1, res.WorkspacesWarned)
	require.Zero(t, res.WorkspacesExpired, "not before its warning is the window old")
	first := awaitEvent(t, hook, cairn.EventWorkspaceExpiring, ws.ID)
	require.Equal(t, ws.Name, first.event.Workspace.Name)

	touched, err := api.TouchWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.True(t, touched.ExpiresAt.After(*ws.ExpiresAt), "a touch moves the expiry")
	require.Equal(t, 1, sweep(t, api).WorkspacesWarned, "the touch withdrew the warning; it is sent again")
	second := awaitEvent(t, hook, cairn.EventWorkspaceExpiring, ws.ID)
	require.NotEqual(t, first.header.Get(webhook.HeaderDelivery), second.header.Get(webhook.HeaderDelivery))

	sweepUntil(t, api, "the expired workspace is deleted", func(r *cairn.SweepResult) bool { return r.WorkspacesExpired == 1 })
	awaitEvent(t, hook, cairn.EventWorkspaceDeleted, ws.ID)
	require.GreaterOrEqual(t, auditedAt(t, api, ws.ID, cairn.AuditDeleteWorkspace).Sub(auditedAt(t, api, ws.ID, cairn.AuditWorkspaceExpiring)),
		lifecycleWarn, "the warning came a window ahead")
	_, err = api.InspectWorkspace(ctx, ws.ID)
	require.Equal(t, cairn.ReasonWorkspaceNotFound, cairn.ErrorReason(err))
}

// TestLifecycleArchive: a volume in use is never archived; once idle it is
// warned of, then snapshotted and removed, and the next setup brings it
// back byte for byte.
func TestLifecycleArchive(t *testing.T) {
	t.Parallel()
	api, hook, app := lifecycleServer(t)
	ctx := t.Context()
	idle := int64(1)
	ws, err := api.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "idle", Lifecycle: cairn.Lifecycle{ArchiveIdleAfterSecs: &idle}})
	require.NoError(t, err)
	require.NoError(t, api.SetupVolume(ctx, ws.ID))
	const tree = "cd /mnt/cairn/ws && mkdir -p d && head -c 200000 /dev/urandom > d/blob && echo kept > note && ln -s d/blob link"
	const sums = "cd /mnt/cairn/ws && find . | sort | while read -r p; do stat -c '%n|%F|%a|%u|%g|%y|%s' \"$p\"; " +
		"if [ -f \"$p\" ] && [ ! -L \"$p\" ]; then sha256sum < \"$p\"; fi; done"
	stacktest.RunInVolume(t, app, ws.VolumeName, tree)
	want := stacktest.RunInVolume(t, app, ws.VolumeName, sums)

	t.Run("NeverWhileMounted", func(t *testing.T) {
		stop := stacktest.StartMounting(t, app, ws.VolumeName)
		defer stop()
		// Passes past the point where an unmounted volume would be gone:
		// the idle bound, then a whole warning window.
		until := time.Now().Add(time.Duration(idle)*time.Second + lifecycleWarn + time.Second)
		for time.Now().Before(until) {
			res := sweep(t, api)
			require.Zero(t, res.WorkspacesWarned+res.WorkspacesArchived, "a mounted volume is in use")
		}
	})

	require.Equal(t, 1, sweep(t, api).WorkspacesWarned)
	awaitEvent(t, hook, cairn.EventWorkspaceArchiving, ws.ID)
	sweepUntil(t, api, "the idle volume is archived", func(r *cairn.SweepResult) bool { return r.WorkspacesArchived == 1 })
	d, err := api.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeNone, d.Workspace.VolumeState)
	require.NotNil(t, d.Workspace.ArchivedSnapshotID)
	require.GreaterOrEqual(t, auditedAt(t, api, ws.ID, cairn.AuditWorkspaceArchived).Sub(auditedAt(t, api, ws.ID, cairn.AuditWorkspaceArchiving)),
		lifecycleWarn, "the warning came a window ahead")
	err = api.DeleteSnapshot(ctx, *d.Workspace.ArchivedSnapshotID)
	require.Equal(t, cairn.ReasonSnapshotInUse, cairn.ErrorReason(err), "the archive's snapshot stays while it is one")

	require.NoError(t, api.SetupVolume(ctx, ws.ID))
	d, err = api.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, cairn.VolumeReady, d.Workspace.VolumeState)
	require.Nil(t, d.Workspace.ArchivedSnapshotID)
	require.Equal(t, want, stacktest.RunInVolume(t, app, ws.VolumeName, sums), "restored byte for byte")
}
