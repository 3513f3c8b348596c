package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// BenchmarkSshKeyToFrame measures a key press to the frame that shows
// it, over loopback SSH into the server's workbench: j and k move the
// selection between two workspaces, and the clock stops when the moved
// selection arrives. It reports the p50 and p99 in milliseconds.
func BenchmarkSshKeyToFrame(b *testing.B) {
	s := startSSHStack(b, "")
	_, err := s.api.CreateWorkspace(b.Context(), cairn.WorkspaceCreate{Name: "ws-beta"})
	require.NoError(b, err)
	g := dialWorkbench(b, s, s.admin)
	g.waitFrom(b, 0, "ws-beta", sshSeen)
	g.waitFrom(b, 0, "● live", sshSeen)
	var mark int
	steps := []struct{ key, shows string }{{"j", "▸ ws-beta"}, {"k", "▸ ws-alpha"}}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		step := steps[i%2]
		mark = g.mark()
		start := time.Now()
		g.keys(b, step.key)
		g.waitFrom(b, mark, step.shows, sshSeen)
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	ms := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Microseconds()) / 1000
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.99), "p99-ms")
}

// BenchmarkSshSessionMemory weighs what a workbench session costs the
// server: its RSS with one warm session, then with 20 more, each showing
// the live list; it reports MiB per session of the first round, since
// later rounds reuse the heap the first one grew (run it with
// -benchtime=1x).
func BenchmarkSshSessionMemory(b *testing.B) {
	const n = 20
	s := startSSHStack(b, "  maxSessions: 32\n  maxSessionsPerKey: 32\n")
	warm := dialWorkbench(b, s, s.admin)
	warm.waitFrom(b, 0, "● live", sshSeen)
	first := true
	for b.Loop() {
		before := rssOf(b, s.srv.PID())
		sessions := make([]*goSSH, n)
		for i := range sessions {
			sessions[i] = dialWorkbench(b, s, s.admin)
		}
		for _, g := range sessions {
			g.waitFrom(b, 0, "● live", sshSeen)
		}
		if after := rssOf(b, s.srv.PID()); first {
			b.ReportMetric(float64(after-before)/n/(1<<20), "MiB/session")
			b.ReportMetric(float64(after)/(1<<20), "MiB-total")
		}
		first = false
		for _, g := range sessions {
			g.close()
		}
	}
}

// rssOf is a process's resident set in bytes (VmRSS of /proc).
func rssOf(b *testing.B, pid int) int64 {
	b.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	require.NoError(b, err)
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(b, err)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc status")
	return 0
}
