package runtimetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
	"github.com/cairn-dev/cairn/sidecar"
)

// testWatch: a watch reports every change made through the writer, and
// goes on past the sidecar timeout and its grace — on Kubernetes past
// the deadline of every watcher pod, so it must hand over to successors —
// without losing one. A watcher is no mount, and StopBrowse ends it.
func testWatch(t *testing.T, h Harness) {
	const timeout = 20 * time.Second
	s := h.New(t, timeout)
	volume, id := provision(t, s)
	target := service.BrowseTarget{WorkspaceID: id, VolumeName: volume}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	w, err := s.Runtime.Watch(ctx, target, 0)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	select {
	case l := <-w.Lines():
		require.True(t, l.Ready, "a watch's first line is Ready: %+v", l)
	case <-ctx.Done():
		t.Fatal("the watch was not ready within a minute")
	}
	counts, err := s.Runtime.MountCounts(t.Context(), []string{volume})
	require.NoError(t, err)
	require.Equal(t, 0, counts[volume], "a watcher is cairn's own, not a mount")

	reported := make(chan sidecar.WatchLine, 1024)
	go func() {
		defer close(reported)
		for l := range w.Lines() {
			reported <- l
		}
	}()
	written := writeUntil(t, s, service.BrowseTarget{WorkspaceID: id, VolumeName: volume, Writable: true},
		time.Now().Add(timeout+10*time.Second))
	awaitReported(t, reported, written)
	require.NoError(t, w.Err())

	require.NoError(t, s.Runtime.StopBrowse(t.Context(), id))
	for range reported { //nolint:revive // drained until the ended watch closes it
	}
	require.NoError(t, s.Runtime.RemoveVolume(t.Context(), volume), "nothing holds the volume once the watch stopped")
	requireNoSidecars(t, s)
}

// writeUntil writes a new file through the writer every 100 ms until
// the deadline, and returns their paths.
func writeUntil(t *testing.T, s *Subject, writer service.BrowseTarget, deadline time.Time) []string {
	t.Helper()
	pace := time.NewTicker(100 * time.Millisecond)
	defer pace.Stop()
	var written []string
	for time.Now().Before(deadline) {
		<-pace.C
		p := fmt.Sprintf("%s/f%04d", cairn.MountPath, len(written))
		reply, err := s.Runtime.Browse(t.Context(), writer, sidecar.BrowseRequest{Op: sidecar.OpPut, Path: p, Size: 1, Body: []byte("x")})
		require.NoError(t, err)
		require.True(t, reply.OK, "%+v", reply)
		written = append(written, p)
	}
	return written
}

// awaitReported reads the watch's lines until every path was reported,
// failing on a resync or the watch's end.
func awaitReported(t *testing.T, reported <-chan sidecar.WatchLine, paths []string) {
	t.Helper()
	want := make(map[string]bool, len(paths))
	for _, p := range paths {
		want[p] = true
	}
	guard := time.NewTimer(time.Minute)
	defer guard.Stop()
	for len(want) > 0 {
		select {
		case l, ok := <-reported:
			require.True(t, ok, "the watch ended with %d changes unreported", len(want))
			require.Empty(t, l.Resync, "changes were lost")
			for _, c := range l.Changes {
				delete(want, c.Path)
			}
		case <-guard.C:
			t.Fatalf("%d of %d changes were not reported within a minute", len(want), len(paths))
		}
	}
}
