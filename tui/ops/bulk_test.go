package ops_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/ops"
)

// fake is the part of ops.Backend a bulk delete or teardown calls; any
// other method panics on the nil embedded Backend. It records how many
// calls run at once. With gate set, each call reports on entered and
// waits for proceed (or its ctx); latency is a server's reply time, for
// the benchmark.
type fake struct {
	ops.Backend
	fail    map[string]error
	latency time.Duration
	gate    bool
	entered chan string
	proceed chan struct{}

	mu        sync.Mutex
	cur, peak int
	calls     []string
}

func newFake() *fake {
	return &fake{fail: map[string]error{}, entered: make(chan string), proceed: make(chan struct{})}
}

func (f *fake) call(ctx context.Context, id string) error {
	f.mu.Lock()
	f.cur++
	f.peak = max(f.peak, f.cur)
	f.calls = append(f.calls, id)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.cur--
		f.mu.Unlock()
	}()
	if f.gate {
		f.entered <- id
		select {
		case <-f.proceed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.latency > 0 {
		t := time.NewTimer(f.latency)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return f.fail[id]
}

func (f *fake) DeleteArtifact(ctx context.Context, id string) error { return f.call(ctx, id) }

func (f *fake) TeardownVolume(ctx context.Context, id string) error { return f.call(ctx, id) }

func (f *fake) InspectWorkspace(_ context.Context, id string) (*cairn.WorkspaceDetail, error) {
	return &cairn.WorkspaceDetail{Workspace: &cairn.Workspace{ID: id, VolumeState: cairn.VolumeNone}}, nil
}

func (f *fake) stats() (peak int, calls []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.peak, append([]string(nil), f.calls...)
}

func deletes(n int) []ops.Op {
	list := make([]ops.Op, n)
	for i := range list {
		list[i] = ops.Op{ID: i + 1, Kind: ops.DeleteArtifact, WSID: "ws-1", WSName: "ws-alpha",
			ArtID: fmt.Sprintf("art-%04d", i), ArtName: fmt.Sprintf("report_%04d", i)}
	}
	return list
}

// recv is the next entry, failing the test rather than hanging forever
// if none comes (a guard, not a synchronisation).
func recv(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case id := <-ch:
		return id
	case <-time.After(10 * time.Second):
		t.Fatal("no call started")
		return ""
	}
}

// run starts cmd and returns where its message arrives.
func run(cmd func() any) <-chan any {
	out := make(chan any, 1)
	go func() { out <- cmd() }()
	return out
}

// TestBulkBoundedAndInOrder deletes 1 000 artifacts at ops.BulkLimit:
// the fake holds every call until the test lets one finish, so exactly 8
// are in flight whenever 8 can be, and never more; three are refused,
// the rest succeed, and each result is in its op's place.
func TestBulkBoundedAndInOrder(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.gate = true
	refused := map[string]cairn.Reason{"art-0007": cairn.ReasonArtifactNotFound, "art-0500": cairn.ReasonForbidden,
		"art-0999": cairn.ReasonInternal}
	for id, reason := range refused {
		f.fail[id] = &cairn.Error{Reason: reason, Status: 409}
	}
	r := ops.NewRunner(t.Context(), f)
	list := deletes(1000)
	cmd := r.Bulk(1, "deleting 1 000 artifacts…", list, ops.BulkLimit)
	require.Equal(t, []ops.Task{{ID: 1, Label: "deleting 1 000 artifacts…"}}, r.Tasks())
	require.Equal(t, "deleting", r.Pending("art-0000"))
	require.Equal(t, "deleting", r.Pending("art-0999"))
	list[0].ArtID = "changed" // the Cmd holds its own copy

	done := run(func() any { return cmd() })
	started := 0
	for released := 0; released < 1000; released++ {
		for started-released < min(ops.BulkLimit, 1000-released) {
			recv(t, f.entered)
			started++
		}
		f.proceed <- struct{}{}
	}
	msg := (<-done).(ops.BulkDoneMsg)

	peak, calls := f.stats()
	require.Equal(t, ops.BulkLimit, peak)
	require.Len(t, calls, 1000)
	require.Equal(t, 1, msg.ID)
	require.Len(t, msg.Results, 1000)
	for i, d := range msg.Results {
		id := fmt.Sprintf("art-%04d", i)
		require.Equal(t, id, d.Op.ArtID, "result %d out of place", i)
		reason, bad := refused[id]
		if !bad {
			require.NoError(t, d.Err, id)
			continue
		}
		var e *cairn.Error
		require.ErrorAs(t, d.Err, &e, id)
		require.Equal(t, reason, e.Reason)
	}

	r.SettleBulk(msg)
	require.Empty(t, r.Tasks())
	require.False(t, r.Busy(), "every pending mark is cleared")
}

// TestBulkCancelStopsStarting cancels with two calls in flight: they end
// with the ctx's error, and no other starts.
func TestBulkCancelStopsStarting(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.gate = true
	ctx, cancel := context.WithCancel(t.Context())
	r := ops.NewRunner(ctx, f)
	done := run(func() any { return r.Bulk(7, "deleting 50 artifacts…", deletes(50), 2)() })
	recv(t, f.entered)
	recv(t, f.entered)
	cancel()
	msg := (<-done).(ops.BulkDoneMsg)

	_, calls := f.stats()
	require.Len(t, calls, 2, "nothing starts after the cancel")
	require.Len(t, msg.Results, 50)
	for i, d := range msg.Results {
		require.Equal(t, fmt.Sprintf("art-%04d", i), d.Op.ArtID)
		require.ErrorIs(t, d.Err, context.Canceled, "result %d", i)
	}
}

// TestBulkTeardownPerRow tears down three volumes, one refused while
// mounted: the others proceed, and each row's pending word goes.
func TestBulkTeardownPerRow(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.fail["ws-b"] = &cairn.Error{Reason: cairn.ReasonVolumeInUse, Status: 409}
	r := ops.NewRunner(t.Context(), f)
	var list []ops.Op
	for i, id := range []string{"ws-a", "ws-b", "ws-c"} {
		list = append(list, ops.Op{ID: i + 1, Kind: ops.Teardown, WSID: id, WSName: "name-" + id})
	}
	cmd := r.Bulk(9, "tearing down 3 volumes…", list, ops.BulkLimit)
	require.Equal(t, "tearing down", r.Pending("ws-b"))
	msg := cmd().(ops.BulkDoneMsg)
	require.NoError(t, msg.Results[0].Err)
	require.Equal(t, cairn.VolumeNone, msg.Results[0].WS.VolumeState, "a teardown re-inspects its workspace")
	var e *cairn.Error
	require.True(t, errors.As(msg.Results[1].Err, &e))
	require.Equal(t, cairn.ReasonVolumeInUse, e.Reason)
	require.NoError(t, msg.Results[2].Err)
	r.SettleBulk(msg)
	require.False(t, r.Busy())
}

func TestPerformAllEmptyAndLimitBelowOne(t *testing.T) {
	t.Parallel()
	f := newFake()
	require.Empty(t, ops.PerformAll(t.Context(), f, nil, ops.BulkLimit))
	res := ops.PerformAll(t.Context(), f, deletes(5), 0)
	require.Len(t, res, 5)
	peak, _ := f.stats()
	require.Equal(t, 1, peak, "a limit below one runs one at a time")
}

// bulkSeconds is how long 1 000 deletes take at limit against a server
// answering in 1 ms.
func bulkSeconds(b *testing.B, limit int) float64 {
	f := newFake()
	f.latency = time.Millisecond
	start := time.Now()
	res := ops.PerformAll(b.Context(), f, deletes(1000), limit)
	if len(res) != 1000 {
		b.Fatalf("%d results", len(res))
	}
	return time.Since(start).Seconds()
}

// BenchmarkBulkDelete1000 deletes 1 000 artifacts at ops.BulkLimit with
// a fake server that takes 1 ms per request, and reports the rate and
// the speed-up over one request at a time.
func BenchmarkBulkDelete1000(b *testing.B) {
	serial := bulkSeconds(b, 1)
	b.ResetTimer()
	var total float64
	for range b.N {
		total += bulkSeconds(b, ops.BulkLimit)
	}
	b.StopTimer()
	per := total / float64(b.N)
	b.ReportMetric(1000/per, "ops/s")
	b.ReportMetric(serial/per, "speedup")
	fmt.Printf("bulk delete of 1 000 artifacts at 1 ms per request: %.0f ops/s at limit %d, %.0f ops/s at limit 1 (speed-up %.2f×)\n",
		1000/per, ops.BulkLimit, 1000/serial, serial/per)
}
