package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// multipartBenchSize is the file BenchmarkMultipartUpload moves (the target:
// parallel parts at 2 GiB ≥ 1.2× one curl).
const multipartBenchSize = 2 << 30

// BenchmarkMultipartUpload measures, side by side through one real server
// and store:
//
//   - the client's upload of 2 GiB in parts, 4 at once and 1 at a time,
//     until the last part is stored (the server's completion and hash of
//     the assembled object follow, timed apart as the register);
//   - `curl -T` of the same file to one presigned PUT minted beforehand;
//   - `cairn art download` of the artifact (4 ranges at once, hashed
//     behind the writers) vs `curl -o` of a presigned GET.
//
// Run it with: CI=true go test -run '^$' -bench MultipartUpload -benchtime 1x ./cmd/cairn/
func BenchmarkMultipartUpload(b *testing.B) {
	srv := stacktest.StartServer(b, stacktest.ServerOptions{MaxObjectSize: 3 << 30})
	s := &proxiedStack{srv: srv, bin: stacktest.Binary(b, "cairn"), state: b.TempDir()}
	dir := b.TempDir()
	src, sum := randomFile(b, dir, "bench.bin", multipartBenchSize)
	wsName := uniqueName("mpbench")
	ws := field[cairn.Workspace](b, s.json(b, "ws", "create", wsName), "workspace")
	cl, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(b, err)

	// upload times the client's parts and its register apart.
	upload := func(i, parallel int) (parts, register time.Duration) {
		var sent time.Time
		start := time.Now()
		a, err := cl.Upload(b.Context(), ws.ID, src, client.UploadOptions{Name: fmt.Sprintf("p%d-%d", parallel, i),
			Parallel: parallel, StateDir: s.state, PhaseProgress: func(p client.Phase, done, total int64) {
				if p == client.PhaseUploading && done == total {
					sent = time.Now()
				}
			}})
		require.NoError(b, err)
		require.Equal(b, sum, *a.SHA256B64)
		return sent.Sub(start), time.Since(sent)
	}
	curl := func(args ...string) time.Duration {
		start := time.Now()
		out, err := exec.CommandContext(b.Context(), "curl", append([]string{"-sS", "-f"}, args...)...).CombinedOutput()
		require.NoError(b, err, "curl: %s", out)
		return time.Since(start)
	}

	var four, one, reg4, reg1, curlUp, cliDown, curlDown time.Duration
	b.ResetTimer()
	for i := range b.N {
		parts, reg := upload(i, 4)
		four, reg4 = four+parts, reg4+reg
		parts, reg = upload(i, 1)
		one, reg1 = one+parts, reg1+reg

		b.StopTimer()
		st := s.mintFor(b, ws.ID, multipartBenchSize, sum)
		curlUp += curl("-o", os.DevNull, "-T", src, "-H", "x-amz-checksum-sha256: "+sum, st.PutURL)
		b.StartTimer()

		out := filepath.Join(dir, "cli.out")
		start := time.Now()
		s.ok(b, "art", "download", wsName+"/p4-"+fmt.Sprint(i), out, "--overwrite", "-o", "name")
		cliDown += time.Since(start)
		b.StopTimer()
		require.Equal(b, sum, stacktest.FileSHA256(b, out))
		getURL := s.getURL(b, wsName+"/p4-"+fmt.Sprint(i))
		curlDown += curl("-o", filepath.Join(dir, "curl.out"), getURL)
		require.NoError(b, os.Remove(out))
		b.StartTimer()
	}
	b.StopTimer()
	mbps := func(d time.Duration) float64 { return float64(b.N) * multipartBenchSize / 1e6 / d.Seconds() }
	per := func(d time.Duration) time.Duration { return (d / time.Duration(b.N)).Round(time.Millisecond) }
	b.ReportMetric(mbps(four), "up-4parts-MB/s")
	b.ReportMetric(mbps(one), "up-1part-MB/s")
	b.ReportMetric(mbps(curlUp), "up-curl-MB/s")
	b.ReportMetric(mbps(four)/mbps(curlUp), "up-4parts-ratio")
	b.ReportMetric(mbps(cliDown)/mbps(curlDown), "down-ratio")
	b.Logf("%s: 2 GiB upload, parts until stored: 4 at once %v (%.0f MB/s), 1 at a time %v (%.0f MB/s); curl -T %v (%.0f MB/s); "+
		"ratio 4 parts/curl %.2f (target ≥ 1.2); then the register (completion + the server's hash) %v / %v",
		stacktest.StoreKind(), per(four), mbps(four), per(one), mbps(one), per(curlUp), mbps(curlUp), mbps(four)/mbps(curlUp), per(reg4), per(reg1))
	b.Logf("%s: 2 GiB download: cairn (4 ranges) %v (%.0f MB/s) vs curl -o %v (%.0f MB/s): ratio %.2f (target ≥ 1.0)",
		stacktest.StoreKind(), per(cliDown), mbps(cliDown), per(curlDown), mbps(curlDown), mbps(cliDown)/mbps(curlDown))
}

// mintFor mints a single-PUT staging slot for a file of that size and
// digest.
func (s *proxiedStack) mintFor(tb testing.TB, wsID string, size int64, sum string) cairn.Staging {
	tb.Helper()
	cl, err := client.New(s.srv.URL, client.WithToken(s.srv.Token))
	require.NoError(tb, err)
	st, err := cl.MintStaging(tb.Context(), wsID, cairn.StagingRequest{Size: size, SHA256B64: sum})
	require.NoError(tb, err)
	require.NotEmpty(tb, st.PutURL)
	return *st
}

// getURL presigns a GET of the artifact WS/NAME.
func (s *proxiedStack) getURL(tb testing.TB, art string) string {
	tb.Helper()
	r := s.ok(tb, "art", "get", art, "--url", "-o", "table")
	return strings.TrimSpace(r.stdout)
}
