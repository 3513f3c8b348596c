package artifacts_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui"
	"github.com/cairn-dev/cairn/tui/modeltest"
	"github.com/cairn-dev/cairn/tui/tuitest"
)

// budget bounds Update + View for a key press: under 16 ms at p99.
const budget = 16 * time.Millisecond

// seed10k makes a workspace of 10 000 realistic artifacts: 20 % described,
// 1 % MISSING_OBJECT, sizes and types that vary.
func seed10k(w *tuitest.World) {
	ws := w.AddWorkspace("ws-bench", cairn.VolumeReady, "")
	for i := range 10000 {
		state := cairn.ArtifactRecorded
		if i%100 == 7 {
			state = cairn.ArtifactMissingObject
		}
		desc := ""
		if i%5 == 0 {
			desc = fmt.Sprintf("run %d of the nightly export, partition %d\nsecond line", i, i%37)
		}
		w.AddArtifact(ws.ID, fmt.Sprintf("artifact_%05d_%s", i, []string{"csv", "json", "parquet", "log"}[i%4]), state, int64(i*1237%9_999_999), desc)
	}
}

// drive delivers msg and every message its Cmds yield (timers are off).
func drive(m tea.Model, msg tea.Msg) {
	queue := []tea.Msg{msg}
	for len(queue) > 0 {
		var cmd tea.Cmd
		m, cmd = m.Update(queue[0])
		queue = append(queue[1:], modeltest.Msgs(cmd)...)
	}
}

// open10k builds the model the way Run does and opens the 10 000
// artifacts at 160×50.
func open10k(b testing.TB) *tui.Model {
	b.Helper()
	lipgloss.SetColorProfile(termenv.TrueColor) // styles rendered as a terminal would
	clock := tuitest.NewClock(tuitest.Epoch())
	be := tuitest.NewBackend(b, clock)
	seed10k(be.World)
	cfg := tuitest.Config()
	cfg.EventsMode = "off"
	m, err := tui.New(tui.Options{
		Config: cfg, Backend: be, Clock: clock.Now, Clipboard: &tuitest.Clipboard{},
		After: func(time.Duration, func() tea.Msg) tea.Cmd { return nil },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.Close)
	drive(m, tea.WindowSizeMsg{Width: 160, Height: 50})
	for _, msg := range modeltest.Msgs(m.Init()) {
		drive(m, msg)
	}
	drive(m, modeltest.Key("enter"))
	if n, _ := m.Store().Artifacts(wsOf(m)); len(n) != 10000 {
		b.Fatalf("opened %d artifacts", len(n))
	}
	return m
}

func wsOf(m *tui.Model) string {
	for _, w := range m.Store().Workspaces() {
		return w.ID
	}
	return ""
}

// BenchmarkKeypress10k measures Update + View per key press with 10 000
// artifacts at 160×50, and reports p50/p99 against the 16 ms budget.
func BenchmarkKeypress10k(b *testing.B) {
	m := open10k(b)
	keys := modeltest.KeyMix()
	durations := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		m.Update(keys[i%len(keys)])
		_ = m.View()
		durations = append(durations, time.Since(start))
	}
	b.StopTimer()
	p50, p99 := report(b, durations)
	fmt.Printf("cairn-tui key press at 10 000 artifacts (Update + View, 160×50): p50 %.2f ms, p99 %.2f ms (budget 16 ms, ratio %.2f)\n",
		modeltest.Millis(p50), modeltest.Millis(p99), float64(p99)/float64(budget))
}

// TestKeypressBudget10k holds a key press to budget: the key mix 500 times
// over 10 000 artifacts, failing at a p99 of 16 ms or more of work
// (modeltest.WorkTime; ×10 under -race, whose instrumentation slows every
// access).
func TestKeypressBudget10k(t *testing.T) {
	m := open10k(t)
	keys := modeltest.KeyMix()
	for _, k := range keys { // warm the row caches as a first screenful would
		m.Update(k)
		_ = m.View()
	}
	runtime.GC()
	durations := make([]time.Duration, 0, 500)
	slowest := map[string]time.Duration{}
	for i := range 500 {
		k := keys[i%len(keys)]
		d := modeltest.WorkTime(func() {
			m.Update(k)
			_ = m.View()
		})
		durations = append(durations, d)
		slowest[k.String()] = max(slowest[k.String()], d)
	}
	p50, p99 := modeltest.Percentiles(durations)
	t.Logf("key press p50 %.2f ms, p99 %.2f ms (budget %v ×%d); slowest per key %v", modeltest.Millis(p50), modeltest.Millis(p99), budget, raceFactor, slowest)
	require.Less(t, p99, budget*raceFactor, "p99 of Update + View per key press at 10 000 artifacts")
}

func report(b *testing.B, d []time.Duration) (p50, p99 time.Duration) {
	p50, p99 = modeltest.Percentiles(d)
	b.ReportMetric(modeltest.Millis(p50), "p50-ms")
	b.ReportMetric(modeltest.Millis(p99), "p99-ms")
	b.ReportMetric(float64(p99)/float64(budget), "p99/budget")
	return p50, p99
}
