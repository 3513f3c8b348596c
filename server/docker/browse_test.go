package docker

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// browseBundle is what a browse test needs beside the Runtime.
type browseBundle struct {
	app    string
	target service.BrowseTarget // a prepared volume of the app
	cli    *client.Client
}

// setupBrowse returns a Runtime on the real engine with one prepared
// workspace volume; its browse containers are closed at cleanup.
func setupBrowse(t *testing.T, cfg Config) (*Runtime, *browseBundle) {
	t.Helper()
	r, app := setupInternal(t, cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.CloseBrowsers(ctx); err != nil {
			t.Errorf("close browsers: %v", err)
		}
	})
	b := &browseBundle{app: app, cli: r.cli}
	b.target = newWorkspace(t, r, app, "ws")
	return r, b
}

// newWorkspace creates and prepares a volume of app, as a volume setup does.
func newWorkspace(t *testing.T, r *Runtime, app, suffix string) service.BrowseTarget {
	t.Helper()
	target := service.BrowseTarget{WorkspaceID: ulid.Make().String(), VolumeName: app + "-" + suffix}
	ctx := t.Context()
	require.NoError(t, r.CreateVolume(ctx, target.VolumeName, nil, 0))
	run, err := r.RunSidecar(ctx, service.SidecarSpec{Command: sidecar.CommandPrep, Role: "volume-prep",
		Subject: target.WorkspaceID, WorkspaceID: target.WorkspaceID, VolumeName: target.VolumeName,
		Env: map[string]string{sidecar.EnvMountRoot: cairn.MountPath}})
	require.NoError(t, err)
	require.Equal(t, 0, run.ExitCode, "prep output: %q", run.Output)
	return target
}

// setBrowseTimeout changes r's browse timeout between requests, under the
// lock the reaper reads it by.
func setBrowseTimeout(r *Runtime, d time.Duration) {
	r.browse.mu.Lock()
	defer r.browse.mu.Unlock()
	r.cfg.BrowseTimeout = d
}

// browsersOf lists app's browse containers, running or not, by workspace.
func browsersOf(t *testing.T, cli *client.Client, app string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(
		filters.Arg("label", LabelApp+"="+app), filters.Arg("label", LabelCommand+"="+sidecar.CommandServe))})
	require.NoError(t, err)
	out := map[string]string{}
	for _, c := range list {
		require.NotContains(t, out, c.Labels[LabelWorkspace], "two browse containers for one workspace")
		out[c.Labels[LabelWorkspace]] = c.ID
	}
	return out
}

// requireNothingOf checks that no container of app is left, running or not.
func requireNothingOf(t *testing.T, cli *client.Client, app string) {
	t.Helper()
	list, err := cli.ContainerList(t.Context(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelApp+"="+app))})
	require.NoError(t, err)
	require.Empty(t, list)
}

func list(t *testing.T, r *Runtime, target service.BrowseTarget, dir string) *sidecar.BrowseReply {
	t.Helper()
	reply, err := r.Browse(t.Context(), target, sidecar.BrowseRequest{Op: sidecar.OpList, Path: dir, Limit: sidecar.MaxListLimit})
	require.NoError(t, err)
	require.True(t, reply.OK, "refused: %s %s", deref(reply.Reason), deref(reply.Error))
	return reply
}

func read(t *testing.T, r *Runtime, target service.BrowseTarget, file string, offset, length int64) *sidecar.BrowseReply {
	t.Helper()
	reply, err := r.Browse(t.Context(), target, sidecar.BrowseRequest{Op: sidecar.OpRead, Path: file, Offset: offset, Length: length})
	require.NoError(t, err)
	require.True(t, reply.OK, "refused: %s %s", deref(reply.Reason), deref(reply.Error))
	return reply
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func names(entries []sidecar.Entry) map[string]sidecar.Entry {
	out := map[string]sidecar.Entry{}
	for _, e := range entries {
		out[e.Name] = e
	}
	return out
}

func TestBrowse(t *testing.T) {
	t.Parallel()

	t.Run("ListAndReadInOneWarmContainer", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		stacktest.RunInVolume(t, b.app, b.target.VolumeName, "cd "+cairn.MountPath+
			" && mkdir dir && printf hello > dir/a.txt && ln -s a.txt dir/link")

		l := list(t, r, b.target, cairn.MountPath+"/dir")
		first := browsersOf(t, b.cli, b.app)
		require.Len(t, first, 1)
		got := names(l.Entries)
		require.Len(t, got, 2)
		require.Equal(t, sidecar.TypeFile, got["a.txt"].Type)
		require.Equal(t, int64(5), got["a.txt"].Size)
		require.Equal(t, sidecar.TypeSymlink, got["link"].Type)
		require.Equal(t, "a.txt", deref(got["link"].LinkTarget))

		c := read(t, r, b.target, cairn.MountPath+"/dir/a.txt", 1, 3)
		require.Equal(t, "ell", string(c.Data))
		require.Equal(t, int64(5), c.File.Size)
		c = read(t, r, b.target, cairn.MountPath+"/dir/a.txt", 0, sidecar.MaxReadBytes)
		require.Equal(t, "hello", string(c.Data), "a read stops at the end of the file")
		require.Equal(t, first, browsersOf(t, b.cli, b.app), "every call went to the same container")
	})

	t.Run("RefusalIsAReplyAndKeepsTheContainer", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		list(t, r, b.target, cairn.MountPath)
		before := browsersOf(t, b.cli, b.app)

		reply, err := r.Browse(t.Context(), b.target, sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/missing", Length: 10})
		require.NoError(t, err)
		require.False(t, reply.OK)
		require.Equal(t, sidecar.ReasonPathNotFound, deref(reply.Reason))
		require.Equal(t, before, browsersOf(t, b.cli, b.app))
	})

	t.Run("ForeignModeZeroFilesReadable", func(t *testing.T) {
		t.Parallel()
		// DAC_READ_SEARCH: root reads and lists what UID 1000 locked away.
		r, b := setupBrowse(t, Config{})
		stacktest.RunInVolume(t, b.app, b.target.VolumeName, "cd "+cairn.MountPath+
			" && mkdir private && printf secret > private/f && chown -R 1000:1000 private && chmod 000 private/f private")

		l := list(t, r, b.target, cairn.MountPath+"/private")
		require.Equal(t, "0000", names(l.Entries)["f"].Mode)
		require.Equal(t, "secret", string(read(t, r, b.target, cairn.MountPath+"/private/f", 0, 100).Data))
	})

	t.Run("ConcurrentRequestsShareOneContainer", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		stacktest.RunInVolume(t, b.app, b.target.VolumeName, "printf abc > "+cairn.MountPath+"/f")

		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Go(func() {
				reply, err := r.Browse(t.Context(), b.target, sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/f", Length: 3})
				if err == nil && string(reply.Data) != "abc" {
					err = cairn.Errorf(cairn.ReasonInternal, "read %q", reply.Data)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		require.Len(t, browsersOf(t, b.cli, b.app), 1)
	})
}

func TestBrowseLifecycle(t *testing.T) {
	t.Parallel()

	t.Run("StopBrowseFreesTheVolume", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		list(t, r, b.target, cairn.MountPath)
		require.Equal(t, cairn.ReasonVolumeInUse, cairn.ErrorReason(r.RemoveVolume(t.Context(), b.target.VolumeName)),
			"the warm container holds the volume")

		require.NoError(t, r.StopBrowse(t.Context(), b.target.WorkspaceID))
		require.Empty(t, browsersOf(t, b.cli, b.app))
		require.NoError(t, r.RemoveVolume(t.Context(), b.target.VolumeName), "a teardown after StopBrowse")
		require.NoError(t, r.StopBrowse(t.Context(), b.target.WorkspaceID), "idempotent")
	})

	t.Run("IdleReaped", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{BrowseIdle: time.Minute})
		list(t, r, b.target, cairn.MountPath)
		first := browsersOf(t, b.cli, b.app)[b.target.WorkspaceID]

		require.Zero(t, r.reapIdle(time.Now().Add(30*time.Second)), "not idle long enough")
		require.Equal(t, 1, r.reapIdle(time.Now().Add(time.Minute)))
		require.Empty(t, browsersOf(t, b.cli, b.app), "the reaper waits for the removal")

		list(t, r, b.target, cairn.MountPath)
		require.NotEqual(t, first, browsersOf(t, b.cli, b.app)[b.target.WorkspaceID], "a fresh one")
	})

	t.Run("ReplacedNearTheEndOfItsLifetime", func(t *testing.T) {
		t.Parallel()
		// Idle for longer than the test: the reaper, on the same clock,
		// leaves the container alone.
		r, b := setupBrowse(t, Config{Timeout: 5 * time.Minute, BrowseIdle: 10 * time.Minute})
		var clock atomic.Int64
		clock.Store(time.Now().UnixNano())
		r.now = func() time.Time { return time.Unix(0, clock.Load()) }
		list(t, r, b.target, cairn.MountPath)
		first := browsersOf(t, b.cli, b.app)[b.target.WorkspaceID]

		clock.Add(int64(4 * time.Minute))
		list(t, r, b.target, cairn.MountPath)
		require.Equal(t, first, browsersOf(t, b.cli, b.app)[b.target.WorkspaceID], "still within its lifetime")

		clock.Add(int64(31 * time.Second)) // within one request timeout of the sidecar's own exit
		list(t, r, b.target, cairn.MountPath)
		now := browsersOf(t, b.cli, b.app)
		require.Len(t, now, 1)
		require.NotEqual(t, first, now[b.target.WorkspaceID], "replaced before the sidecar's lifetime ends")
	})

	t.Run("MaxBrowsersEvictsTheLeastRecentlyUsed", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{MaxBrowsers: 2})
		second, third := newWorkspace(t, r, b.app, "two"), newWorkspace(t, r, b.app, "three")
		list(t, r, b.target, cairn.MountPath)
		list(t, r, second, cairn.MountPath)
		list(t, r, b.target, cairn.MountPath) // the second is now the least recently used

		list(t, r, third, cairn.MountPath)
		now := browsersOf(t, b.cli, b.app)
		require.Len(t, now, 2)
		require.Contains(t, now, b.target.WorkspaceID)
		require.Contains(t, now, third.WorkspaceID)
	})

	t.Run("CancelledMidRequestRemovesIt", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		stacktest.RunInVolume(t, b.app, b.target.VolumeName, "head -c 1048576 /dev/zero > "+cairn.MountPath+"/big")
		list(t, r, b.target, cairn.MountPath)
		ctx, cancel := context.WithCancel(t.Context())
		r.browse.sent = func(context.Context) { cancel() } // the client hangs up once the request is out

		_, err := r.Browse(ctx, b.target, sidecar.BrowseRequest{Op: sidecar.OpRead, Path: cairn.MountPath + "/big", Length: sidecar.MaxReadBytes})
		require.ErrorIs(t, err, context.Canceled)
		requireNothingOf(t, b.cli, b.app)

		r.browse.sent = nil
		require.Len(t, read(t, r, b.target, cairn.MountPath+"/big", 0, sidecar.MaxReadBytes).Data, sidecar.MaxReadBytes, "the next call starts fresh")
	})

	t.Run("ErrSidecarTimeoutWhenItDoesNotAnswer", func(t *testing.T) {
		t.Parallel()
		// The warm-up starts the container under the default bound; only
		// the frozen request is held to the short one, so a loaded engine
		// slow to start a container cannot trip it.
		r, b := setupBrowse(t, Config{})
		list(t, r, b.target, cairn.MountPath)
		setBrowseTimeout(r, 2*time.Second)
		// Frozen: the request goes out and nothing comes back.
		require.NoError(t, b.cli.ContainerPause(t.Context(), browsersOf(t, b.cli, b.app)[b.target.WorkspaceID]))

		began := time.Now()
		_, err := r.Browse(t.Context(), b.target, sidecar.BrowseRequest{Op: sidecar.OpList, Path: cairn.MountPath})
		require.Equal(t, cairn.ReasonSidecarTimeout, cairn.ErrorReason(err), "err: %v", err)
		require.Less(t, time.Since(began), 40*time.Second)
		requireNothingOf(t, b.cli, b.app)
	})

	t.Run("KilledContainerReplacedTransparently", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		list(t, r, b.target, cairn.MountPath)
		first := browsersOf(t, b.cli, b.app)[b.target.WorkspaceID]

		require.NoError(t, b.cli.ContainerKill(t.Context(), first, "KILL"))
		list(t, r, b.target, cairn.MountPath)
		now := browsersOf(t, b.cli, b.app)
		require.Len(t, now, 1)
		require.NotEqual(t, first, now[b.target.WorkspaceID])
		_, err := b.cli.ContainerInspect(t.Context(), first)
		require.True(t, cerrdefs.IsNotFound(err), "the killed one is gone: %v", err)
	})

	t.Run("DiedBeforeItsReplyRetriedOnce", func(t *testing.T) {
		t.Parallel()
		// Frozen, the container takes the request unanswered; killed
		// then, its stream ends before a byte of the reply.
		r, b := setupBrowse(t, Config{})
		list(t, r, b.target, cairn.MountPath)
		first := browsersOf(t, b.cli, b.app)[b.target.WorkspaceID]
		require.NoError(t, b.cli.ContainerPause(t.Context(), first))
		kills := 0
		r.browse.sent = func(ctx context.Context) {
			if kills++; kills == 1 {
				require.NoError(t, b.cli.ContainerKill(ctx, first, "KILL"))
			}
		}

		list(t, r, b.target, cairn.MountPath)
		require.Equal(t, 2, kills, "sent twice")
		now := browsersOf(t, b.cli, b.app)
		require.Len(t, now, 1)
		require.NotEqual(t, first, now[b.target.WorkspaceID])
	})

	t.Run("ErrServerShuttingDownAfterClose", func(t *testing.T) {
		t.Parallel()
		r, b := setupBrowse(t, Config{})
		list(t, r, b.target, cairn.MountPath)

		require.NoError(t, r.CloseBrowsers(t.Context()))
		requireNothingOf(t, b.cli, b.app)
		_, err := r.Browse(t.Context(), b.target, sidecar.BrowseRequest{Op: sidecar.OpList, Path: cairn.MountPath})
		require.Equal(t, cairn.ReasonServerShuttingDown, cairn.ErrorReason(err), "err: %v", err)
	})

	t.Run("ErrDockerUnavailable", func(t *testing.T) {
		t.Parallel()
		cli, err := client.NewClientWithOpts(client.WithHost("unix:///nonexistent-cairn-test.sock"), client.WithAPIVersionNegotiation())
		require.NoError(t, err)
		r := New(cli, Config{AppName: "cairnt-dead"})

		_, err = r.Browse(t.Context(), service.BrowseTarget{WorkspaceID: "ws", VolumeName: "cairnt-dead-ws"},
			sidecar.BrowseRequest{Op: sidecar.OpList, Path: cairn.MountPath})
		require.Equal(t, cairn.ReasonDockerUnavailable, cairn.ErrorReason(err), "err: %v", err)
		require.NotContains(t, cairn.ErrorDetail(err), "nonexistent")
		require.NoError(t, r.CloseBrowsers(t.Context()))
	})
}

// TestMountCountsSkipsBrowse: a warm browse container is cairn's own
// reader, not a user of the workspace.
func TestMountCountsSkipsBrowse(t *testing.T) {
	t.Parallel()
	r, b := setupBrowse(t, Config{})
	list(t, r, b.target, cairn.MountPath)
	require.Len(t, browsersOf(t, b.cli, b.app), 1)

	counts, err := r.MountCounts(t.Context(), []string{b.target.VolumeName})
	require.NoError(t, err)
	require.Equal(t, 0, counts[b.target.VolumeName])

	stop := stacktest.StartMounting(t, b.app, b.target.VolumeName)
	defer stop()
	counts, err = r.MountCounts(t.Context(), []string{b.target.VolumeName})
	require.NoError(t, err)
	require.Equal(t, 1, counts[b.target.VolumeName], "a user's container still counts")
}
