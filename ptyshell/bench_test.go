package ptyshell_test

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/ptyshell/ptyshelltest"
)

// BenchmarkEchoRoundTrip types single-byte INPUT frames through Session and
// Serve to an echoing in-memory stream and times each echo on loopback: the
// protocol's own share of the keystroke echo, whose target is p99 < 5 ms
// end to end, Docker included.
func BenchmarkEchoRoundTrip(b *testing.B) {
	stream := ptyshelltest.NewStream()
	stream.Echo = true
	srv := ptyshelltest.NewServer(b, stream, ptyshell.ServeOptions{Status: testStatus})
	s := ptyshelltest.Session(b, srv.URL)
	ctx := b.Context()
	for { // STATUS starting, running
		m, err := s.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if m.Status != nil && m.Status.State == ptyshell.StateRunning {
			break
		}
	}
	rtts := make([]time.Duration, 0, b.N)
	key := []byte{'k'}
	for b.Loop() {
		start := time.Now()
		if _, err := s.Write(key); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 1; {
			m, err := s.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			got += bytes.Count(m.Output, key)
		}
		rtts = append(rtts, time.Since(start))
	}
	slices.Sort(rtts)
	b.ReportMetric(float64(rtts[len(rtts)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(rtts[len(rtts)*99/100].Microseconds()), "p99-µs")
}
