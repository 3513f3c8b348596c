package live_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/live"
)

var t0 = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

func now() time.Time { return t0 }

func wsEvent(id string, seq int64, name string) cairn.Event {
	return cairn.Event{Seq: seq, Type: cairn.EventWorkspaceUpserted, ID: id, Workspace: &cairn.Workspace{ID: id, Name: name}}
}

func wait(t *testing.T, h *live.Hub) live.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := h.Wait(ctx)
	require.NoError(t, err)
	return b
}

func TestHubMerge(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 100, now)
	h.Event(wsEvent("a", 1, "first"))
	h.Event(wsEvent("b", 2, "other"))
	h.Event(wsEvent("a", 3, "latest"))
	b := wait(t, h)
	require.Len(t, b.Events, 2)
	require.Equal(t, "latest", b.Events[0].Workspace.Name, "latest object wins, in its first place")
	require.Equal(t, t0, b.At)
}

func TestHubDeleteFollowsEarlierFrames(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 100, now)
	h.Event(wsEvent("w", 1, "ws"))
	h.Event(cairn.Event{Seq: 2, Type: cairn.EventArtifactUpserted, ID: "x", Artifact: &cairn.Artifact{ID: "x", WorkspaceID: "w"}})
	h.Event(cairn.Event{Seq: 3, Type: cairn.EventWorkspaceDeleted, ID: "w"})
	b := wait(t, h)
	require.Len(t, b.Events, 2)
	require.Equal(t, cairn.EventArtifactUpserted, b.Events[0].Type)
	require.Equal(t, cairn.EventWorkspaceDeleted, b.Events[1].Type, "the delete tombstone comes last")
}

func TestHubBurstIsOneBatch(t *testing.T) {
	t.Parallel()
	h := live.NewHub(50*time.Millisecond, 50000, now)
	for i := range 2000 {
		h.Event(wsEvent(fmt.Sprint(i), int64(i+1), "x"))
	}
	h.Resync("server resync")
	b := wait(t, h)
	require.Len(t, b.Events, 2000)
	require.Equal(t, []string{"server resync"}, b.Resync)
}

func TestHubProgressKeepsTheLatestSamplePerTransfer(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 100, now)
	h.Progress(live.Sample{Transfer: 2, Done: 10, Total: 100})
	h.Progress(live.Sample{Transfer: 1, Done: 5, Total: 50})
	h.Progress(live.Sample{Transfer: 2, Done: 40, Total: 100, At: t0.Add(time.Second)})
	b := wait(t, h)
	require.Equal(t, []live.Sample{
		{Transfer: 2, Done: 40, Total: 100, At: t0.Add(time.Second)},
		{Transfer: 1, Done: 5, Total: 50, At: t0},
	}, b.Progress, "one sample per transfer, the latest, stamped by the hub when unstamped")
	h.Progress(live.Sample{Transfer: 1, Done: 50, Total: 50})
	require.Equal(t, []live.Sample{{Transfer: 1, Done: 50, Total: 50, At: t0}}, wait(t, h).Progress, "delivered samples are gone")
}

func TestHubNotesKeepOrderAndABound(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 100, now)
	h.Progress(live.Sample{Transfer: 1, Done: 5, Total: 50, Parts: 1, PartsTotal: 4})
	for i := range 20 {
		h.Note(live.Note{Transfer: 1, Text: fmt.Sprint(i)})
	}
	b := wait(t, h)
	require.Len(t, b.Notes, 16, "a bounded slot")
	require.Equal(t, "4", b.Notes[0].Text, "the oldest go first")
	require.Equal(t, "19", b.Notes[15].Text)
	require.Equal(t, 1, b.Progress[0].Parts, "parts ride on the sample")
	h.Note(live.Note{Transfer: 2, Text: "again"})
	b = wait(t, h)
	require.Equal(t, []live.Note{{Transfer: 2, Text: "again"}}, b.Notes, "delivered notes are gone")
	require.False(t, b.Empty())
}

func TestHubOverflowAsksResync(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 10, now)
	for i := range 11 {
		h.Event(wsEvent(fmt.Sprint(i), int64(i+1), "x"))
	}
	b := wait(t, h)
	require.Empty(t, b.Events)
	require.Equal(t, []string{"events overflow"}, b.Resync)
	h.Event(wsEvent("z", 12, "x"))
	require.Len(t, wait(t, h).Events, 1, "the next batch is normal again")
}

func TestHubWriterNeverBlocks(t *testing.T) {
	t.Parallel()
	h := live.NewHub(time.Hour, 100, now)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 1000 {
			h.Event(wsEvent("a", int64(i), "x"))
			h.Conn(live.Conn{Kind: live.ConnLost})
		}
	}()
	<-done // nobody waits on the hub: the writes still return
}

func TestHubWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 10, now)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := h.Wait(ctx)
	require.ErrorIs(t, err, context.Canceled)
}

// script is an events service whose stream replays items, then blocks.
type script struct {
	mu     sync.Mutex
	items  []item
	opened int
}

type item struct {
	ev  cairn.Event
	err error
}

func (s *script) Events(context.Context, cairn.EventFilter) (cairn.EventStream, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opened++
	return &scriptStream{s: s}, nil
}

type scriptStream struct{ s *script }

func (st *scriptStream) Next(ctx context.Context) (cairn.Event, error) {
	st.s.mu.Lock()
	if len(st.s.items) > 0 {
		it := st.s.items[0]
		st.s.items = st.s.items[1:]
		st.s.mu.Unlock()
		return it.ev, it.err
	}
	st.s.mu.Unlock()
	<-ctx.Done()
	return cairn.Event{}, ctx.Err()
}

func (st *scriptStream) Close() error { return nil }

// collect runs a pump over items until want batches' worth of frames
// arrived, and returns everything delivered.
func collect(t *testing.T, items []item, until func(live.Batch) bool) (live.Batch, *script) {
	t.Helper()
	return collectWith(t, items, func(live.Batch) {}, until)
}

// collectWith is collect, handing each batch to each first.
func collectWith(t *testing.T, items []item, each func(live.Batch), until func(live.Batch) bool) (live.Batch, *script) {
	t.Helper()
	svc := &script{items: items}
	h := live.NewHub(0, 1000, now)
	p := live.NewPump(svc, h, now)
	p.Start(context.Background())
	defer p.Stop()
	var all live.Batch
	for !until(all) {
		b := wait(t, h)
		each(b)
		all.Events = append(all.Events, b.Events...)
		all.Resync = append(all.Resync, b.Resync...)
		all.Conn = append(all.Conn, b.Conn...)
	}
	return all, svc
}

func kinds(cs []live.Conn) []live.ConnKind {
	out := make([]live.ConnKind, len(cs))
	for i, c := range cs {
		out[i] = c.Kind
	}
	return out
}

func TestPumpSeq(t *testing.T) {
	t.Parallel()
	items := []item{
		{ev: cairn.Event{Type: cairn.EventHello, ServerTime: t0}},
		{ev: wsEvent("a", 1, "one")},
		{ev: wsEvent("a", 1, "duplicate")},
		{ev: wsEvent("b", 3, "after a gap")},
		{ev: wsEvent("c", 2, "lower")},
	}
	all, _ := collect(t, items, func(b live.Batch) bool { return len(b.Events) >= 2 && len(b.Resync) >= 1 })
	require.Len(t, all.Events, 2)
	require.Equal(t, "one", all.Events[0].Workspace.Name)
	require.Equal(t, "after a gap", all.Events[1].Workspace.Name)
	require.Equal(t, []string{"seq gap"}, all.Resync)
	require.Equal(t, []live.ConnKind{live.ConnDialing, live.ConnHello}, kinds(all.Conn))
}

func TestPumpReconnect(t *testing.T) {
	t.Parallel()
	items := []item{
		{ev: cairn.Event{Type: cairn.EventHello}},
		{ev: wsEvent("a", 1, "one")},
		{err: &cairn.DisconnectedError{RetryIn: time.Second, Err: errors.New("reset")}},
		{ev: cairn.Event{Type: cairn.EventHello}},
		{ev: cairn.Event{Type: cairn.EventResync}},
		{ev: wsEvent("b", 1, "seq restarts")},
	}
	all, svc := collect(t, items, func(b live.Batch) bool { return len(b.Events) >= 2 })
	require.Equal(t, []live.ConnKind{live.ConnDialing, live.ConnHello, live.ConnLost, live.ConnHello}, kinds(all.Conn))
	require.Equal(t, time.Second, all.Conn[2].RetryIn)
	require.Equal(t, []string{"server resync"}, all.Resync)
	require.Equal(t, 1, svc.opened, "the stream redials itself")
}

func TestPumpUnavailable(t *testing.T) {
	t.Parallel()
	items := []item{{err: &cairn.DisconnectedError{RetryIn: time.Second, Err: &cairn.Error{Status: 404, Reason: cairn.ReasonInternal}}}}
	all, _ := collect(t, items, func(b live.Batch) bool { return len(b.Conn) >= 2 })
	require.True(t, all.Conn[1].Unavailable)
}

func TestPumpStopsOnRejectedTokenUntilRetry(t *testing.T) {
	t.Parallel()
	svc := &script{items: []item{{err: &cairn.Error{Reason: cairn.ReasonUnauthenticated, Status: 401}}}}
	h := live.NewHub(0, 1000, now)
	p := live.NewPump(svc, h, now)
	p.Start(context.Background())
	defer p.Stop()
	var conns []live.Conn
	for len(conns) < 2 {
		conns = append(conns, wait(t, h).Conn...)
	}
	require.Equal(t, []live.ConnKind{live.ConnDialing, live.ConnStopped}, kinds(conns))
	p.Retry()
	b := wait(t, h)
	require.Equal(t, live.ConnDialing, b.Conn[0].Kind, "r retries: a new subscription")
	p.Stop() // the pump has opened it by the time its goroutine ends
	svc.mu.Lock()
	require.Equal(t, 2, svc.opened)
	svc.mu.Unlock()
}

func TestPumpStopWithoutStart(t *testing.T) {
	t.Parallel()
	p := live.NewPump(&script{}, live.NewHub(0, 1, now), now)
	p.Stop()
	p.Stop()
}

// stuck is a service whose stream ignores its context until released.
type stuck struct{ release chan struct{} }

func (s stuck) Events(context.Context, cairn.EventFilter) (cairn.EventStream, error) { return s, nil }
func (s stuck) Next(context.Context) (cairn.Event, error) {
	<-s.release
	return cairn.Event{}, errors.New("released")
}
func (s stuck) Close() error { return nil }

func TestPumpStopWithinGivesUp(t *testing.T) {
	t.Parallel()
	s := stuck{release: make(chan struct{})}
	h := live.NewHub(0, 10, now)
	p := live.NewPump(s, h, now)
	p.Start(context.Background())
	wait(t, h) // dialing: the pump is inside Next
	require.False(t, p.StopWithin(10*time.Millisecond), "a stream that ignores its context cannot hold quitting")
	close(s.release)
	require.True(t, p.StopWithin(0))
}

// TestPumpBackoff: a subscription that fails outright is retried on
// termkit.Redial's schedule, or at its cap when the server has no events
// endpoint. Retry cuts each wait short.
func TestPumpBackoff(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	none := &cairn.Error{Status: 404, Reason: cairn.ReasonInternal}
	for _, c := range []struct {
		name string
		errs []error
		want []time.Duration
	}{
		{"Doubles", []error{boom, boom, boom}, []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second}},
		{"NoEventsEndpoint", []error{none}, []time.Duration{30 * time.Second}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			svc := &script{}
			for _, err := range c.errs {
				svc.items = append(svc.items, item{err: err})
			}
			h := live.NewHub(0, 1000, now)
			p := live.NewPump(svc, h, now)
			p.Start(context.Background())
			defer p.Stop()
			var got []time.Duration
			for len(got) < len(c.want) {
				for _, cn := range wait(t, h).Conn {
					if cn.Kind == live.ConnLost {
						got = append(got, cn.RetryIn)
						p.Retry()
					}
				}
			}
			for i, want := range c.want {
				require.InDelta(t, want, got[i], 0.2*float64(want)+1, "wait %d: ±20 %%", i)
			}
		})
	}
}

// A snapshot's frames merge by the snapshot: its delete follows, and an
// artifact of the same ID is another entity.
func TestHubSnapshotFrames(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 100, now)
	h.Event(cairn.Event{Seq: 1, Type: cairn.EventSnapshotCreated, ID: "s", Snapshot: &cairn.Snapshot{ID: "s", WorkspaceID: "w"}})
	h.Event(cairn.Event{Seq: 2, Type: cairn.EventArtifactUpserted, ID: "s", Artifact: &cairn.Artifact{ID: "s", WorkspaceID: "w"}})
	h.Event(cairn.Event{Seq: 3, Type: cairn.EventSnapshotDeleted, ID: "s", WorkspaceID: "w"})
	b := wait(t, h)
	require.Len(t, b.Events, 2)
	require.Equal(t, cairn.EventArtifactUpserted, b.Events[0].Type)
	require.Equal(t, cairn.EventSnapshotDeleted, b.Events[1].Type, "the snapshot's delete comes last")
}

func TestPumpPassesSnapshotFrames(t *testing.T) {
	t.Parallel()
	items := []item{
		{ev: cairn.Event{Type: cairn.EventHello, ServerTime: t0}},
		{ev: cairn.Event{Seq: 1, Type: cairn.EventSnapshotCreated, ID: "s", WorkspaceID: "w", Snapshot: &cairn.Snapshot{ID: "s"}}},
	}
	all, _ := collect(t, items, func(b live.Batch) bool { return len(b.Events) >= 1 })
	require.Equal(t, cairn.EventSnapshotCreated, all.Events[0].Type, "the snapshots screens list again on it")
}

func warning(typ cairn.EventType, id string, seq int64) cairn.Event {
	return cairn.Event{Seq: seq, Type: typ, ID: id, Workspace: &cairn.Workspace{ID: id, Name: "warned"}}
}

// A lifecycle warning goes beside the change frames: it neither replaces
// a pending upsert of its workspace nor is replaced by one; a repeat of
// one kind replaces it in its place, the other kind is another warning;
// an events overflow keeps them, a new epoch drops them.
func TestHubWarningsBesideChanges(t *testing.T) {
	t.Parallel()
	h := live.NewHub(0, 2, now)
	h.Event(wsEvent("w", 1, "before"))
	h.Warning(warning(cairn.EventWorkspaceExpiring, "w", 2))
	h.Event(wsEvent("w", 3, "after"))
	h.Warning(warning(cairn.EventWorkspaceArchiving, "w", 4))
	h.Warning(warning(cairn.EventWorkspaceExpiring, "w", 5))
	b := wait(t, h)
	require.Len(t, b.Events, 1)
	require.Equal(t, "after", b.Events[0].Workspace.Name, "the upsert merges as ever")
	require.Len(t, b.Warnings, 2)
	require.Equal(t, cairn.EventWorkspaceExpiring, b.Warnings[0].Type)
	require.Equal(t, int64(5), b.Warnings[0].Seq, "the repeat, in the first one's place")
	require.Equal(t, cairn.EventWorkspaceArchiving, b.Warnings[1].Type)
	require.False(t, b.Empty())

	for i := range 3 {
		h.Event(wsEvent(fmt.Sprint(i), int64(i+6), "x"))
	}
	h.Warning(warning(cairn.EventWorkspaceExpiring, "w", 9))
	b = wait(t, h)
	require.Empty(t, b.Events)
	require.Equal(t, []string{"events overflow"}, b.Resync)
	require.Len(t, b.Warnings, 1, "a resync lists rows, never warnings: they stay")

	h.Warning(warning(cairn.EventWorkspaceExpiring, "w", 10))
	h.NewEpoch()
	h.Note(live.Note{Transfer: 1, Text: "kept"})
	require.Empty(t, wait(t, h).Warnings, "another connection's")
}

// The pump hands warnings to the hub's own slot, counting them in seq:
// a frame after one follows without a gap.
func TestPumpPassesWarnings(t *testing.T) {
	t.Parallel()
	items := []item{
		{ev: cairn.Event{Type: cairn.EventHello, ServerTime: t0}},
		{ev: wsEvent("w", 1, "one")},
		{ev: warning(cairn.EventWorkspaceExpiring, "w", 2)},
		{ev: warning(cairn.EventWorkspaceExpiring, "w", 2)},
		{ev: wsEvent("w", 3, "three")},
	}
	var warnings []cairn.Event
	all, _ := collectWith(t, items, func(b live.Batch) { warnings = append(warnings, b.Warnings...) },
		func(b live.Batch) bool {
			return len(b.Events) >= 1 && b.Events[len(b.Events)-1].Workspace.Name == "three"
		})
	require.Len(t, warnings, 1, "the repeated seq is dropped")
	require.Equal(t, cairn.EventWorkspaceExpiring, warnings[0].Type)
	require.Empty(t, all.Resync, "no seq gap")
}
