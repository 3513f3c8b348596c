package client_test

import (
	"context"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/server"
)

// readyWorkspace creates a workspace named name with a volume, as the API
// shows it once READY.
func readyWorkspace(t *testing.T, c *client.Client, name string) *cairn.Workspace {
	t.Helper()
	ws, err := c.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: name})
	require.NoError(t, err)
	require.NoError(t, c.SetupVolume(t.Context(), ws.ID))
	d, err := c.InspectWorkspace(t.Context(), ws.ID)
	require.NoError(t, err)
	return d.Workspace
}

// nextFiles reads frames until a files frame, skipping the rest.
func nextFiles(t *testing.T, s cairn.EventStream) cairn.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), eventWait)
	defer cancel()
	for {
		ev, err := s.Next(ctx)
		require.NoError(t, err)
		if ev.Type == cairn.EventFilesChanged || ev.Type == cairn.EventFilesResync {
			return ev
		}
	}
}

// awaitChange reads files frames until path shows up with op.
func awaitChange(t *testing.T, s cairn.EventStream, path, op string) cairn.Event {
	t.Helper()
	for {
		ev := nextFiles(t, s)
		t.Logf("frame %s %s %+v", ev.Type, ev.Reason, ev.Changes)
		require.Equal(t, cairn.EventFilesChanged, ev.Type, "reason %q", ev.Reason)
		for _, c := range ev.Changes {
			if c.Path == path && c.Op == op {
				return ev
			}
		}
	}
}

// TestWatchFiles: a subscriber that asks for a workspace's files sees a
// tool container's writes and the API's, under its path only; a cursor
// resumes what a reconnect missed, and an unknown one is told to resync.
func TestWatchFiles(t *testing.T) {
	b := newBackend(t)
	url := b.remote(t)
	c := newClient(t, url)
	ctx := t.Context()
	ws := readyWorkspace(t, c, "watched")
	b.mkdir(t, ws, "/mnt/cairn/ws/in")

	stream, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: ws.ID, Files: "/mnt/cairn/ws/in"})
	require.NoError(t, err)
	defer stream.Close() //nolint:errcheck // closed once more at the end
	hello, err := stream.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, cairn.EventHello, hello.Type)

	b.sh(t, ws, "echo outside > /mnt/cairn/ws/not-watched && echo hi > /mnt/cairn/ws/in/by-tool")
	ev := awaitChange(t, stream, "/mnt/cairn/ws/in/by-tool", "created")
	require.Equal(t, ws.ID, ev.WorkspaceID)
	require.NotEmpty(t, ev.Cursor)
	for _, ch := range ev.Changes {
		require.NotEqual(t, "/mnt/cairn/ws/not-watched", ch.Path, "only the path asked for")
	}
	_, err = c.WriteFile(ctx, ws.ID, cairn.FileWriteParams{Path: "/mnt/cairn/ws/in/by-api", Data: []byte("x")})
	require.NoError(t, err)
	last := awaitChange(t, stream, "/mnt/cairn/ws/in/by-api", "moved_to")
	require.NoError(t, stream.Close())

	t.Run("OKResumed", func(t *testing.T) {
		b.sh(t, ws, "echo missed > /mnt/cairn/ws/in/while-away")
		again, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: ws.ID, Files: "/mnt/cairn/ws/in", Cursor: last.Cursor})
		require.NoError(t, err)
		defer again.Close() //nolint:errcheck // the test is over
		awaitChange(t, again, "/mnt/cairn/ws/in/while-away", "created")
	})
	t.Run("OKUnknownCursorResyncs", func(t *testing.T) {
		stale, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: ws.ID, Files: "/mnt/cairn/ws/in",
			Cursor: "01ARZ3NDEKTSV4RRFFQ69G5FAV.7"})
		require.NoError(t, err)
		defer stale.Close() //nolint:errcheck // the test is over
		ev := nextFiles(t, stale)
		require.Equal(t, cairn.EventFilesResync, ev.Type)
		require.Equal(t, cairn.ResyncCursorUnknown, ev.Reason)
	})
	for name, q := range map[string]string{
		"ErrNoWorkspace": "?files=/mnt/cairn/ws",
		"ErrBadCursor":   "?files=/mnt/cairn/ws&workspace_id=" + ws.ID + "&cursor=nope",
		"ErrOutside":     "?files=/etc&workspace_id=" + ws.ID,
		"ErrCursorAlone": "?cursor=x",
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/v1/events"+q, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+adminToken)
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", "13")
			req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusBadRequest, resp.StatusCode)
		})
	}
	t.Run("ErrNoVolume", func(t *testing.T) {
		bare, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "unwatched"})
		require.NoError(t, err)
		s, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: bare.ID, Files: "/mnt/cairn/ws"})
		require.NoError(t, err)
		defer s.Close() //nolint:errcheck // the test is over
		_, err = s.Next(ctx)
		require.Equal(t, cairn.ReasonVolumeNotReady, cairn.ErrorReason(err), "%v", err)
	})
}

// TestWatchFloodIsBounded: a tool container makes 100 000 files as fast as
// it can under a watched directory while the subscriber reads. Either
// every file is reported, or the subscriber is told to resync; the stream
// never stalls, and the server's heap stays bounded whatever arrives.
func TestWatchFloodIsBounded(t *testing.T) {
	b := newBackend(t)
	c := newClient(t, b.remote(t))
	ctx := t.Context()
	ws := readyWorkspace(t, c, "flooded")
	b.mkdir(t, ws, "/mnt/cairn/ws/flood")
	stream, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: ws.ID, Files: "/mnt/cairn/ws/flood"})
	require.NoError(t, err)
	defer stream.Close() //nolint:errcheck // the test is over
	// Subscribed once a change shows.
	for i := 0; ; i++ {
		require.Less(t, i, 30, "the watch never reported a change")
		b.sh(t, ws, "touch /mnt/cairn/ws/flood/probe-"+strconv.Itoa(i))
		wait, cancel := context.WithTimeout(ctx, 2*time.Second)
		ev, err := stream.Next(wait)
		cancel()
		if err == nil && ev.Type == cairn.EventFilesChanged {
			break
		}
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const files = 100_000
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.sh(t, ws, "cd /mnt/cairn/ws/flood && i=0; while [ $i -lt "+strconv.Itoa(files)+" ]; do : > f$i; i=$((i+1)); done")
	}()
	seen := map[string]bool{}
	resynced := false
	for !resynced && len(seen) < files {
		ev := nextFiles(t, stream)
		if ev.Type == cairn.EventFilesResync {
			resynced = true
			break
		}
		for _, ch := range ev.Changes {
			if strings.HasPrefix(ch.Path, "/mnt/cairn/ws/flood/f") {
				seen[ch.Path] = true
			}
		}
	}
	<-done
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("%d of %d files reported, resync %v; heap in use %d → %d MiB", len(seen), files, resynced,
		before.HeapInuse>>20, after.HeapInuse>>20)
	require.True(t, resynced || len(seen) == files, "every file, or a resync")
	require.Less(t, after.HeapInuse, before.HeapInuse+256<<20, "the server's heap stays bounded")
}

// TestWatchFilesPolling: with files.watch.pollMillis, as for a volume whose
// filesystem reports nothing through inotify, the watcher walks the tree
// and a tool container's write still shows.
func TestWatchFilesPolling(t *testing.T) {
	b := newBackend(t)
	c := newClient(t, b.remote(t, func(cfg *server.Config) { cfg.Files.Watch.PollMillis = 100 }))
	ctx := t.Context()
	ws := readyWorkspace(t, c, "polled")
	stream, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: ws.ID, Files: cairn.MountPath})
	require.NoError(t, err)
	defer stream.Close() //nolint:errcheck // the test is over
	for i := 0; ; i++ {
		require.Less(t, i, 30, "the polling watch never reported a write")
		name := "/mnt/cairn/ws/polled-" + strconv.Itoa(i)
		b.sh(t, ws, "echo x > "+name)
		wait, cancel := context.WithTimeout(ctx, 3*time.Second)
		ev, err := stream.Next(wait)
		cancel()
		if err == nil && ev.Type == cairn.EventFilesChanged && ev.Changes[0].Op == "created" {
			return
		}
	}
}
