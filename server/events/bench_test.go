package events_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
)

// BenchmarkCommitToFrame measures, for 100 subscribers, the time from a
// change committed through server A (the REST call that commits it is
// sent) to its frame read by each subscriber: on server A itself, and on
// server B, which shares only the database. Target p99 < 50 ms. The REST
// call's own round trip, which the measure includes, is printed beside it.
func BenchmarkCommitToFrame(b *testing.B) {
	be := newBackend(b)
	a, bb := be.start(b, 0), be.start(b, 0)
	ws, err := a.client.CreateWorkspace(context.Background(), cairn.WorkspaceCreate{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		on   *running
	}{{"OneServer", a}, {"AcrossServers", bb}} {
		b.Run(c.name, func(b *testing.B) { commitToFrame(b, a, c.on, ws.ID, 100) })
	}
}

// frames is one subscriber reading in the background; it reports when the
// frame carrying a marker arrives.
type frames struct {
	conn *websocket.Conn
	want chan []byte // the marker to wait for
	got  chan time.Time
}

func (f *frames) run() {
	for marker := range f.want {
		for {
			_, raw, err := f.conn.ReadMessage()
			if err != nil {
				close(f.got)
				return
			}
			if bytes.Contains(raw, marker) {
				f.got <- time.Now()
				break
			}
		}
	}
}

func commitToFrame(b *testing.B, via, on *running, wsID string, n int) {
	ctx := context.Background()
	subs := make([]*frames, n)
	probe := make([]*sub, n)
	for i := range subs {
		probe[i] = subscribe(b, on.base, dialOptions{})
		subs[i] = &frames{conn: probe[i].conn, want: make(chan []byte, 1), got: make(chan time.Time, 1)}
	}
	live(b, via, probe...)
	var wg sync.WaitGroup
	for _, f := range subs {
		wg.Go(f.run)
	}
	defer func() {
		for _, f := range subs {
			close(f.want)
			_ = f.conn.Close() // ending it; its reader stops
		}
		wg.Wait()
	}()

	var lat, rest []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		desc := fmt.Sprintf("bench-%d", i)
		marker := []byte(`"description":"` + desc + `"`)
		for _, f := range subs {
			f.want <- marker
		}
		t0 := time.Now()
		if _, err := via.client.SetWorkspaceDescription(ctx, wsID, &desc); err != nil {
			b.Fatal(err)
		}
		rest = append(rest, time.Since(t0))
		for _, f := range subs {
			at, ok := <-f.got
			if !ok {
				b.Fatal("a subscriber's connection ended")
			}
			lat = append(lat, at.Sub(t0))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	slices.Sort(rest)
	p := func(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	p50, p99 := p(lat, 0.50), p(lat, 0.99)
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	b.ReportMetric(ms(p(rest, 0.50)), "rest-p50-ms")
	b.ReportMetric(float64(p99)/float64(50*time.Millisecond), "p99/target")
	b.Logf("%d subscribers, %d changes: commit→frame p50 %s, p99 %s (target p99 < 50 ms: %.2f×); the REST call alone p50 %s, p99 %s",
		len(subs), len(rest), p50, p99, float64(p99)/float64(50*time.Millisecond), p(rest, 0.5), p(rest, 0.99))
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
