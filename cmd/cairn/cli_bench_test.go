package main

import (
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// benchSize is the file the transfer benchmark moves.
const benchSize = 512 << 20

// BenchmarkCLITransfer measures the CLI against curl through the same real
// server and store, side by side in one run:
//
//   - upload: `cairn art upload` of 512 MiB (hash, mint, PUT, register)
//     vs `curl -T` of the same file to a presigned PUT minted beforehand;
//   - download: `cairn art download` (presign, GET, verify, rename) vs
//     `curl -o` of a presigned GET.
//
// It reports MB/s of each and the cairn/curl ratios (target ≥ 0.8), and
// logs where the upload's extra time goes: the hash pass (timed alone over
// the same file) and the register (timed on curl's staged object: the
// server's copy from staging to the final key).
//
// Run it with: CI=true go test -run '^$' -bench CLITransfer -benchtime 1x ./cmd/cairn/
func BenchmarkCLITransfer(b *testing.B) {
	s := startCLIServer(b)
	dir := b.TempDir()
	src, sum := randomFile(b, dir, "bench.bin", benchSize)
	wsName := uniqueName("bench")
	ws := field[cairn.Workspace](b, s.json(b, "ws", "create", wsName), "workspace")
	curl := func(args ...string) time.Duration {
		start := time.Now()
		out, err := exec.CommandContext(b.Context(), "curl", append([]string{"-sS", "-f"}, args...)...).CombinedOutput()
		require.NoError(b, err, "curl: %s", out)
		return time.Since(start)
	}
	timed := func(args ...string) (time.Duration, string) {
		start := time.Now()
		r := s.ok(b, args...)
		return time.Since(start), strings.TrimSpace(r.stdout)
	}

	var cliUp, curlUp, cliDown, curlDown, hashing, register time.Duration
	b.ResetTimer()
	for i := range b.N {
		took, id := timed("art", "upload", wsName, src, "--name", fmt.Sprintf("cli-%d", i), "-o", "name")
		cliUp += took
		out := filepath.Join(dir, "cli.out")
		took, _ = timed("art", "download", id, out, "--overwrite", "-o", "name")
		cliDown += took

		b.StopTimer()
		staging := s.mint(b, ws.ID, benchSize, sum)
		curlUp += curl("-o", os.DevNull, "-T", src, "-H", "x-amz-checksum-sha256: "+sum, staging.PutURL)
		start := time.Now()
		s.register(b, ws.ID, staging.Key, fmt.Sprintf("curl-%d", i))
		register += time.Since(start)
		getURL := field[string](b, s.rest(b, http.MethodGet, "/v1/artifacts/"+id+"?presign"), "get_url")
		curled := filepath.Join(dir, "curl.out")
		curlDown += curl("-o", curled, getURL)
		require.Equal(b, sum, stacktest.FileSHA256(b, out))
		require.Equal(b, sum, stacktest.FileSHA256(b, curled))
		hashing += hashOnce(b, src)
		b.StartTimer()
	}
	b.StopTimer()
	mbps := func(d time.Duration) float64 { return float64(b.N) * benchSize / 1e6 / d.Seconds() }
	b.ReportMetric(mbps(cliUp), "up-cli-MB/s")
	b.ReportMetric(mbps(curlUp), "up-curl-MB/s")
	b.ReportMetric(mbps(cliUp)/mbps(curlUp), "up-ratio")
	b.ReportMetric(mbps(cliDown), "down-cli-MB/s")
	b.ReportMetric(mbps(curlDown), "down-curl-MB/s")
	b.ReportMetric(mbps(cliDown)/mbps(curlDown), "down-ratio")
	// The client's own part of an upload: all of it but the register,
	// whose time is the server copying the object from staging to its final
	// key.
	client := cliUp - register
	b.ReportMetric(mbps(client)/mbps(curlUp), "up-client-ratio")
	per := func(d time.Duration) time.Duration { return (d / time.Duration(b.N)).Round(time.Millisecond) }
	b.Logf("%s: 512 MiB upload: cairn %.0f MB/s, curl -T %.0f MB/s, ratio %.2f (target ≥ 0.9); download: cairn %.0f MB/s, "+
		"curl -o %.0f MB/s, ratio %.2f (target ≥ 1.0)", stacktest.StoreKind(), mbps(cliUp), mbps(curlUp), mbps(cliUp)/mbps(curlUp),
		mbps(cliDown), mbps(curlDown), mbps(cliDown)/mbps(curlDown))
	b.Logf("upload per run: cairn %v, of which the register (the server's copy from staging to the final key) %v; "+
		"the client's part %v (its hash pass alone %v) vs curl -T %v: ratio %.2f",
		per(cliUp), per(register), per(client), per(hashing), per(curlUp), mbps(client)/mbps(curlUp))
}

// hashOnce times one SHA-256 pass over a file, as the client makes it.
func hashOnce(tb testing.TB, path string) time.Duration {
	tb.Helper()
	start := time.Now()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	_, err = io.CopyBuffer(sha256.New(), f, make([]byte, 1<<20))
	require.NoError(tb, err)
	return time.Since(start)
}
