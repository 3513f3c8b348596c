package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// bigSize is above the 5 GiB a single PUT (or the old register's copy)
// could carry.
const bigSize = 6 << 30

// BenchmarkCLI6GiB: a 6 GiB artifact goes up through the CLI in parts and
// comes back verified, with the CLI's peak memory under 64 MiB each way and
// the server's flat: its high-water mark grows by less than 32 MiB while it
// completes the upload and hashes all 6 GiB of it. It is a benchmark, run
// by `make bench`, not a test: 24 GiB of disk traffic in `make test` starve
// the Docker engine that the shell tests beside it time.
//
// Run it with: CI=true go test -run '^$' -bench CLI6GiB -benchtime 1x ./cmd/cairn/
func BenchmarkCLI6GiB(b *testing.B) {
	for range b.N {
		sixGiB(b)
	}
}

func sixGiB(t *testing.B) {
	s := startProxiedStack(t, stacktest.ServerOptions{MaxObjectSize: bigSize + 1<<30})
	dir := t.TempDir()
	wsName := uniqueName("big")
	s.ok(t, "ws", "create", wsName)
	src, sum := randomFile(t, dir, "six.bin", bigSize)
	before, ok := vmHWM(s.srv.PID())
	require.True(t, ok)

	up := s.ok(t, "art", "upload", wsName, src, "-o", "name")
	require.NoError(t, os.Remove(src)) // room on the disk
	after, ok := vmHWM(s.srv.PID())
	require.True(t, ok)
	out := filepath.Join(dir, "back")
	down := s.ok(t, "art", "download", strings.TrimSpace(up.stdout), out)
	require.Equal(t, sum, stacktest.FileSHA256(t, out), "the recorded SHA-256 is the file's, and the download verified it")

	t.ReportMetric(mib(up.maxRSS), "cli-up-MiB")
	t.ReportMetric(mib(down.maxRSS), "cli-down-MiB")
	t.ReportMetric(mib(after-before), "server-growth-MiB")
	t.Logf("6 GiB: CLI peak RSS upload %.1f MiB, download %.1f MiB; server high-water mark %.1f → %.1f MiB",
		mib(up.maxRSS), mib(down.maxRSS), mib(before), mib(after))
	require.Positive(t, up.maxRSS)
	require.Less(t, up.maxRSS, int64(64<<20))
	require.Less(t, down.maxRSS, int64(64<<20))
	require.Less(t, after-before, int64(32<<20), "the server's memory does not follow the object's size")
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
