package client_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// BenchmarkWatchLatency measures, for b.N files written into a watched
// volume one after another, the time from the write to its files.changed
// frame at a subscriber of the real server (watcher container, hub,
// events websocket, client). The writes go to the volume's directory on
// this host, where the engine keeps it: the same filesystem every
// container of the workspace writes. Target: p99 < 100 ms (a batch waits
// 50 ms for company). Run it with:
// CI=true go test -run '^$' -bench WatchLatency -benchtime 200x ./client/
func BenchmarkWatchLatency(b *testing.B) {
	bk := newBackend(b)
	c := newClient(b, bk.remote(b))
	ctx := b.Context()
	ws, err := c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "latency"})
	require.NoError(b, err)
	require.NoError(b, c.SetupVolume(ctx, ws.ID))
	vol, err := stacktest.Docker(b).VolumeInspect(ctx, ws.VolumeName)
	require.NoError(b, err)
	stream, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: ws.ID, Files: cairn.MountPath})
	require.NoError(b, err)
	defer stream.Close() //nolint:errcheck // the bench is over
	write := func(name string) time.Time {
		start := time.Now()
		require.NoError(b, os.WriteFile(filepath.Join(vol.Mountpoint, name), []byte("x"), 0o644))
		return start
	}
	arrived := func(name string) time.Time {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		for {
			ev, err := stream.Next(ctx)
			require.NoError(b, err)
			for _, ch := range ev.Changes {
				if ch.Path == cairn.MountPath+"/"+name {
					return time.Now()
				}
			}
		}
	}
	// Until the subscription is up: a write then shows.
	for i := 0; ; i++ {
		name := "warm-" + strconv.Itoa(i)
		write(name)
		wait, cancel := context.WithTimeout(ctx, 2*time.Second)
		ev, err := stream.Next(wait)
		cancel()
		if err == nil && len(ev.Changes) > 0 {
			break
		}
		require.Less(b, i, 30, "the watch never reported a write")
	}
	latencies := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		name := "f-" + strconv.Itoa(i)
		start := write(name)
		latencies = append(latencies, arrived(name).Sub(start))
	}
	b.StopTimer()
	slices.Sort(latencies)
	p := func(q float64) time.Duration { return latencies[int(q*float64(len(latencies)-1))] }
	b.ReportMetric(float64(p(0.99).Microseconds())/1000, "p99-ms")
	b.Logf("watch latency, write to frame, %d writes: p50 %v, p99 %v, max %v (target p99 < 100ms)",
		len(latencies), p(0.5).Round(time.Millisecond), p(0.99).Round(time.Millisecond), latencies[len(latencies)-1].Round(time.Millisecond))
}
