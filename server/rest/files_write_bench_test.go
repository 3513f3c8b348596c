package rest_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// BenchmarkFileWrite measures a warm write of 1 MiB through PUT
// …/files/content against what a user without the route does: `docker
// exec -i C sh -c 'cat > f'` into a container mounting the volume. Both
// write the same bytes to the same volume, one after the other, b.N times.
// Target: the route takes ≤ 0.5× the exec. Run it with:
// CI=true go test -run '^$' -bench FileWrite ./server/rest/
func BenchmarkFileWrite(b *testing.B) {
	h := xferSetup(b, xferOpts{timeout: 60 * time.Second})
	ws := h.volumeWorkspace(b, "")
	id, stop := stacktest.StartInVolume(b, h.b.app, ws.VolumeName, "sleep 3600")
	b.Cleanup(stop)
	body := make([]byte, 1<<20)
	_, err := rand.Read(body)
	require.NoError(b, err)
	changeOf(b, h.put(b, ws.ID, volRoot+"/warm", body)) // starts the writer
	execWrite := func() time.Duration {
		cmd := exec.CommandContext(b.Context(), "docker", "exec", "-i", id, "sh", "-c", "cat > "+volRoot+"/by-exec")
		stdin, err := cmd.StdinPipe()
		require.NoError(b, err)
		start := time.Now()
		require.NoError(b, cmd.Start())
		_, err = stdin.Write(body)
		require.NoError(b, err)
		require.NoError(b, stdin.Close())
		require.NoError(b, cmd.Wait())
		return time.Since(start)
	}
	execWrite() // warms the exec path as well

	var api, floor time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		changeOf(b, h.put(b, ws.ID, volRoot+"/by-api", body))
		api += time.Since(start)
		floor += execWrite()
	}
	b.StopTimer()
	reportRatio(b, "write 1 MiB warm, route / docker exec cat (target ≤ 0.5)", api, floor)
}

// BenchmarkFileSearch measures a content search of 10 000 text files (4 KiB
// of hex lines each, 100 directories: nothing is skipped as binary) through GET …/files/search against `docker exec C
// grep -rn` over the same tree, for a string in a few of them. Target: the
// route takes ≤ 1.5× the grep. Run it with:
// CI=true go test -run '^$' -bench FileSearch ./server/rest/
func BenchmarkFileSearch(b *testing.B) {
	const files, needles = 10_000, 5
	h := xferSetup(b, xferOpts{timeout: 60 * time.Second})
	ws := h.volumeWorkspace(b, "mkdir tree")
	tree := filepath.Join(h.hostPath(b, ws), "tree")
	fillTextTree(b, tree, files, 4<<10)
	for i := range needles {
		f := filepath.Join(tree, sprintf("d%03d", i*17), "needle.txt")
		require.NoError(b, os.WriteFile(f, []byte("hay\nthe needle is here\n"), 0o644))
	}
	id, stop := stacktest.StartInVolume(b, h.b.app, ws.VolumeName, "sleep 3600")
	b.Cleanup(stop)
	path := volRoot + "/tree"
	search := func() {
		var s searchAnswer
		decodeOK(b, h.do(b, h.url, "GET", "/v1/workspaces/"+ws.ID+"/files/search?content=needle+is&path="+path, ""), &s)
		require.Len(b, s.Matches, needles)
		require.Empty(b, s.Stopped)
	}
	grep := func() {
		out, err := exec.CommandContext(b.Context(), "docker", "exec", id, "grep", "-rn", "needle is", path).Output()
		require.NoError(b, err)
		require.Equal(b, needles, countLines(out))
	}
	search() // warm caches and the browse container for both
	grep()

	var api, floor time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		search()
		api += time.Since(start)
		start = time.Now()
		grep()
		floor += time.Since(start)
	}
	b.StopTimer()
	reportRatio(b, "search 10 000 files, route / docker exec grep -rn (target ≤ 1.5)", api, floor)
}

type searchAnswer struct {
	Matches []struct {
		Path string `json:"path"`
	} `json:"matches"`
	Stopped string `json:"stopped"`
}

// reportRatio prints the two sides' mean times and their ratio.
func reportRatio(b *testing.B, what string, api, floor time.Duration) {
	b.Helper()
	n := time.Duration(b.N)
	ratio := float64(api) / float64(floor)
	b.ReportMetric(ratio, "ratio")
	b.Logf("%s: %v / %v = %.2f", what, (api / n).Round(time.Microsecond), (floor / n).Round(time.Microsecond), ratio)
}

func countLines(out []byte) int {
	n := 0
	for _, c := range out {
		if c == '\n' {
			n++
		}
	}
	return n
}

// decodeOK checks an OK envelope and decodes its payload into v.
func decodeOK(tb testing.TB, r *response, v any) {
	tb.Helper()
	ok(tb, r)
	require.NoError(tb, json.Unmarshal(r.body, v))
}

// fillTextTree writes n files of size bytes of hex text in lines, 100 to a
// directory.
func fillTextTree(tb testing.TB, dir string, n, size int) {
	tb.Helper()
	raw := make([]byte, size/2)
	buf := make([]byte, size)
	for i := range n {
		sub := filepath.Join(dir, sprintf("d%03d", i/100))
		require.NoError(tb, os.MkdirAll(sub, 0o777))
		_, err := rand.Read(raw)
		require.NoError(tb, err)
		hex.Encode(buf, raw)
		for j := 63; j < size; j += 64 {
			buf[j] = '\n'
		}
		require.NoError(tb, os.WriteFile(filepath.Join(sub, sprintf("f%05d", i)), buf, 0o644))
	}
}
