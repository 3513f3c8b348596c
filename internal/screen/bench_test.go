package screen

import (
	"io"
	"runtime"
	"strings"
	"testing"
)

// BenchmarkScreenThroughput writes realistic output (numbered lines with
// SGR, 100 MiB in the full run) in 32 KiB chunks, against a plain copy to
// io.Discard: v1 has no emulator on its path.
func BenchmarkScreenThroughput(b *testing.B) {
	data := colored(20000)
	for len(data) < 8<<20 {
		data = append(data, data...)
	}
	run := func(b *testing.B, w io.Writer) {
		b.SetBytes(100 << 20)
		for b.Loop() {
			for sent := 0; sent < 100<<20; {
				off := sent % (len(data) - 32<<10)
				_, _ = w.Write(data[off : off+32<<10])
				sent += 32 << 10
			}
		}
	}
	b.Run("discard", func(b *testing.B) { run(b, io.Discard) })
	b.Run("screen", func(b *testing.B) { run(b, New(80, 24, 1000)) })
	plain := data
	data = []byte(strings.Repeat("func (f *feeder) scanPlain(p []byte) int { // a source line\r\n", 200000))
	b.Run("screen-plain-text", func(b *testing.B) { run(b, New(80, 24, 1000)) })
	data = plain
	b.Run("vt-unbuffered", func(b *testing.B) {
		b.SetBytes(1 << 20)
		s := newScreen(80, 24, 1000, false)
		for b.Loop() {
			for off := 0; off < 1<<20; off += 32 << 10 {
				_, _ = s.Write(data[off : off+32<<10])
			}
		}
	})
}

// TestMemoryPerSession measures the heap one detached session holds at
// 80×24 with 1 000 lines of full, colored scrollback, and prints it.
func TestMemoryPerSession(t *testing.T) {
	const sessions = 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := make([]*Screen, sessions)
	for i := range keep {
		keep[i] = New(80, 24, 1000)
		for range 3 {
			_, _ = keep[i].Write(colored(1500))
		}
		_ = keep[i].Render() // what a reattach forces: nothing held back
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / sessions
	t.Logf("heap per session at 80x24 with 1000 lines of scrollback: %d bytes (%.1f MiB)", per, float64(per)/(1<<20))
	if per > 16<<20 {
		t.Fatalf("a session holds %d bytes", per)
	}
	runtime.KeepAlive(keep)
}
