package tui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/transfer"
)

// BenchmarkEventBurst10k applies one coalesced batch to a model showing
// 10 000 artifacts at 160×50 and renders it, against budgets of 16 ms for
// 100 events and 100 ms for 10 000.
func BenchmarkEventBurst10k(b *testing.B) {
	for _, n := range []int{100, 10000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			budget := map[int]time.Duration{100: 16 * time.Millisecond, 10000: 100 * time.Millisecond}[n]
			h, arts := burstModel(b)
			b.ReportAllocs()
			b.ResetTimer()
			var total time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				batch := burst(arts, n, i)
				b.StartTimer()
				start := time.Now()
				h.m.Update(hubMsg{batch: batch})
				_ = h.m.View()
				total += time.Since(start)
			}
			b.StopTimer()
			mean := total / time.Duration(b.N)
			b.ReportMetric(modeltest.Millis(mean), "ms/batch")
			b.ReportMetric(float64(mean)/float64(budget), "mean/budget")
		})
	}
}

func burstModel(b *testing.B) (*harness, []*cairn.Artifact) {
	lipgloss.SetColorProfile(termenv.TrueColor)
	b.Cleanup(func() { lipgloss.SetColorProfile(termenv.Ascii) })
	h := newHarness(b)
	ws := h.b.World.AddWorkspace("ws-bench", cairn.VolumeReady, "")
	arts := make([]*cairn.Artifact, 0, 10000)
	for i := range 10000 {
		arts = append(arts, h.b.World.AddArtifact(ws.ID, fmt.Sprintf("artifact_%05d", i), cairn.ArtifactRecorded, int64(i*977), ""))
	}
	h.size(160, 50).hello()
	h.key("enter")
	return h, arts
}

// burst is n artifact upserts, newer than round's previous ones: a size
// change on each, a few turning MISSING_OBJECT.
func burst(arts []*cairn.Artifact, n, round int) live.Batch {
	at := time.Now()
	evs := make([]cairn.Event, 0, n)
	for i := range n {
		a := *arts[(round*n+i)%len(arts)]
		a.Size += int64(round + 1)
		a.UpdatedAt = a.UpdatedAt.Add(time.Duration(round+1) * time.Second)
		if i%50 == 0 {
			a.State = cairn.ArtifactMissingObject
		}
		arts[(round*n+i)%len(arts)] = &a
		evs = append(evs, cairn.Event{Type: cairn.EventArtifactUpserted, ID: a.ID, Artifact: &a})
	}
	return live.Batch{Events: evs, At: at}
}

// BenchmarkKeypress10kWithTransfers is BenchmarkKeypress10k's key mix
// (tui/screens/artifacts) on the model showing 10 000 artifacts at 160×50
// while two transfers report progress: before every key press a hub
// batch brings a sample of each, as the 100 ms callbacks would. It
// reports the key press's Update + View at p50 and p99 against the 16 ms
// budget, and the progress batch's.
func BenchmarkKeypress10kWithTransfers(b *testing.B) {
	h, _ := burstModel(b)
	ws := h.m.Store().Workspaces()[0].ID
	for i := range 2 {
		h.m.xfer.Enqueue(transfer.Spec{Kind: transfer.Upload, WSID: ws, Name: fmt.Sprintf("upload_%d", i), Path: "./f", Size: 64 << 20})
	}
	keys := modeltest.KeyMix()
	var keyTimes, batchTimes []time.Duration
	ids := []int{h.m.xfer.All()[0].ID, h.m.xfer.All()[1].ID}
	at := time.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		at = at.Add(100 * time.Millisecond)
		done := int64(i%640+1) << 17
		batch := live.Batch{At: at, Progress: []live.Sample{
			{Transfer: ids[0], Done: done, Total: 64 << 20, At: at}, {Transfer: ids[1], Done: done / 2, Total: 64 << 20, At: at}}}
		start := time.Now()
		h.m.Update(hubMsg{batch: batch})
		_ = h.m.View()
		batchTimes = append(batchTimes, time.Since(start))
		start = time.Now()
		h.m.Update(keys[i%len(keys)])
		_ = h.m.View()
		keyTimes = append(keyTimes, time.Since(start))
	}
	b.StopTimer()
	if h.m.xfer.Running() != 2 {
		b.Fatalf("%d transfers running", h.m.xfer.Running())
	}
	p50, p99 := modeltest.Percentiles(keyTimes)
	b.ReportMetric(modeltest.Millis(p50), "key-p50-ms")
	b.ReportMetric(modeltest.Millis(p99), "key-p99-ms")
	b.ReportMetric(float64(p99)/float64(16*time.Millisecond), "key-p99/budget")
	_, bp99 := modeltest.Percentiles(batchTimes)
	b.ReportMetric(modeltest.Millis(bp99), "progress-p99-ms")
}
