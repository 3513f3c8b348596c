package rest_test

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/service"
)

// BenchmarkArchives measures pack and unpack of 1 GiB in 10 000 files
// through the real server, Docker and store against their floors, side by
// side in one run:
//
//   - Pack: artifact-from-volume with format tar.gz vs `tar czf - DIR |
//     curl -T - URL` on the host, over the volume's own directory, to a PUT
//     presigned for the same store. The store refuses a chunked PUT, so the
//     pipe's floor is its slower stage (tar czf to /dev/null, or curl -T of
//     the archive). Target ≥ 0.8 (throughput ratio).
//   - Unpack: unpack-in-volume of that artifact vs `curl URL | tar xzf -`
//     into a fresh directory of the volume. Target ≥ 0.8.
//
// The files are half random bytes and half text, so gzip has work to do on
// both kinds. Run it with:
// CI=true go test -run '^$' -bench Archives -benchtime 1x ./server/rest/
func BenchmarkArchives(b *testing.B) {
	const files, fileSize = 10000, 100 << 10 // 10 000 × 100 KiB ≈ 1 GiB
	// 10 000 files and their 100 directories are past the default bound
	// of 10 000 entries.
	h := xferSetup(b, xferOpts{timeout: 600 * time.Second, maxSize: 4 << 30, unpack: service.UnpackLimits{MaxEntries: 20000}})
	ws := h.volumeWorkspace(b, "mkdir tree")
	tree := filepath.Join(h.hostPath(b, ws), "tree")
	fillTree(b, tree, files, fileSize)
	total := float64(files * fileSize)
	shell := func(script string, env ...string) time.Duration {
		b.Helper()
		flushDirty()
		cmd := exec.CommandContext(b.Context(), "bash", "-o", "pipefail", "-c", script)
		cmd.Env = append(os.Environ(), env...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		require.NoError(b, err, "%s: %s", script, out)
		return time.Since(start)
	}

	var packAPI, packFloor, unpackAPI, unpackFloor time.Duration
	for i := range b.N {
		name := sprintf("tree-%d", i)
		flushDirty()
		start := time.Now()
		a := xferArtifactOf(b, h.pack(b, ws.ID, volRoot+"/tree", name, "tar.gz"))
		packAPI += time.Since(start)

		// The store refuses a PUT of unknown length (411), so the pipe
		// runs as its two stages, and its floor is the slower of them:
		// what the pipe would take if the stages overlapped perfectly.
		gz := filepath.Join(b.TempDir(), "floor.tar.gz")
		compress := shell(`tar czf - -C "$DIR" . > /dev/null`, "DIR="+tree)
		shell(`tar czf "$OUT" -C "$DIR" .`, "DIR="+tree, "OUT="+gz)
		put := h.unboundPut(b, sprintf("bench/%s-floor.tar.gz", name))
		upload := shell(`curl -sS -f -o /dev/null -T "$GZ" "$URL"`, "GZ="+gz, "URL="+put)
		packFloor += max(compress, upload)
		b.Logf("floor stages: tar czf %v, curl -T %v", compress.Round(time.Millisecond), upload.Round(time.Millisecond))

		target := sprintf("out-%d", i)
		flushDirty()
		start = time.Now()
		ok(b, h.unpack(b, a.ID, volRoot+"/"+target))
		unpackAPI += time.Since(start)

		floorDir := filepath.Join(h.hostPath(b, ws), target+"-floor")
		require.NoError(b, os.Mkdir(floorDir, 0o777))
		unpackFloor += shell(`curl -sS -f "$URL" | tar xzf - -C "$DIR"`, "URL="+h.presignURL(b, a.ID), "DIR="+floorDir)
		b.Logf("archive %d bytes (%.0f%% of the tree); cairn pack %v, unpack %v", a.Size, 100*float64(a.Size)/total,
			packAPI.Round(time.Millisecond), unpackAPI.Round(time.Millisecond))
	}
	rate := func(d time.Duration) float64 { return total / d.Seconds() / 1e6 }
	b.ReportMetric(rate(packAPI)/rate(packFloor), "pack-ratio")
	b.ReportMetric(rate(unpackAPI)/rate(unpackFloor), "unpack-ratio")
	b.Logf("%s: pack 1 GiB in %d files: cairn %.0f MB/s, tar czf | curl -T %.0f MB/s, ratio %.2f (target ≥ 0.9)",
		stacktest.StoreKind(), files, rate(packAPI), rate(packFloor), rate(packAPI)/rate(packFloor))
	b.Logf("%s: unpack: cairn %.0f MB/s, curl | tar xzf %.0f MB/s, ratio %.2f (target ≥ 0.9)", stacktest.StoreKind(),
		rate(unpackAPI), rate(unpackFloor), rate(unpackAPI)/rate(unpackFloor))
}

// fillTree writes n files of size bytes under dir, 100 to a directory:
// each half random bytes, half hex text of random bytes.
func fillTree(tb testing.TB, dir string, n, size int) {
	tb.Helper()
	buf := make([]byte, size)
	for i := range n {
		sub := filepath.Join(dir, sprintf("d%03d", i/100))
		require.NoError(tb, os.MkdirAll(sub, 0o777))
		_, err := rand.Read(buf[:size/2])
		require.NoError(tb, err)
		hex.Encode(buf[size/2:], buf[:size/4])
		require.NoError(tb, os.WriteFile(filepath.Join(sub, sprintf("f%05d", i)), buf, 0o644))
	}
}

// flushDirty flushes dirty pages, so that neither side pays for the other's
// writes.
func flushDirty() { syscall.Sync() }
