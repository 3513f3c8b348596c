package rest_test

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/service"
)

type snapshotAnswer struct {
	Snapshot struct {
		ID            string `json:"id"`
		Bytes         int64  `json:"bytes"`
		UploadedBytes int64  `json:"uploaded_bytes"`
	} `json:"snapshot"`
}

// BenchmarkSnapshot measures snapshots of a 1 GiB, 10 000-file workspace
// (hex text, 100 KiB a file) against packing the same tree as tar.gz:
//   - the first snapshot against the pack (target ≤ 1.1);
//   - a second one after 1 % of the files changed against the first
//     (target ≤ 0.2, uploading ≤ 5 % of the first's bytes);
//   - a fork against pack plus unpack (target ≤ 1.2).
//
// Every iteration fills a workspace with new content. Run it with:
// CI=true go test -run '^$' -bench Snapshot -benchtime 1x -timeout 30m ./server/rest/
func BenchmarkSnapshot(b *testing.B) {
	const files, size = 10_000, 100 << 10
	h := xferSetup(b, xferOpts{timeout: 10 * time.Minute, maxSize: 2 << 30, unpack: service.UnpackLimits{MaxEntries: 2 * files}})
	var pack, first, second, fork, packUnpack time.Duration
	var firstUp, secondUp int64
	for i := range b.N {
		ws := h.volumeWorkspace(b, "mkdir tree")
		tree := filepath.Join(h.hostPath(b, ws), "tree")
		fillTextTree(b, tree, files, size)

		start := time.Now()
		var art struct {
			Artifact struct {
				ID string `json:"id"`
			} `json:"artifact"`
		}
		decodeOK(b, h.pack(b, ws.ID, volRoot+"/tree", sprintf("pack-%d", i), "tar.gz"), &art)
		pack += time.Since(start)
		start = time.Now()
		ok(b, h.unpack(b, art.Artifact.ID, volRoot+"/unpacked"))
		packUnpack += pack + time.Since(start)
		ok(b, h.do(b, h.url, http.MethodDelete, "/v1/workspaces/"+ws.ID+"/files?path="+volRoot+"/unpacked&recursive=true", ""))

		s1 := h.snapshot(b, ws.ID, &first)
		firstUp += s1.Snapshot.UploadedBytes
		changeEvery100th(b, tree, files, size)
		s2 := h.snapshot(b, ws.ID, &second)
		secondUp += s2.Snapshot.UploadedBytes

		start = time.Now()
		ok(b, h.do(b, h.url, http.MethodPost, "/v1/workspaces/"+ws.ID+"/fork", sprintf(`{"name":"fork-%d-%d"}`, i, time.Now().UnixNano())))
		fork += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(secondUp)/float64(firstUp), "upload-share")
	b.Logf("uploaded: first %d B, second %d B (%.3f of the first; target ≤ 0.05)", firstUp, secondUp, float64(secondUp)/float64(firstUp))
	reportRatio(b, "first snapshot / tar.gz pack of the tree (target ≤ 1.1)", first, pack)
	reportRatio(b, "second snapshot after 1 % changed / first (target ≤ 0.2)", second, first)
	reportRatio(b, "fork / pack + unpack (target ≤ 1.2)", fork, packUnpack)
}

// snapshot takes one, adding its time to took.
func (h *xferHarness) snapshot(b *testing.B, ws string, took *time.Duration) snapshotAnswer {
	b.Helper()
	start := time.Now()
	r := h.do(b, h.url, http.MethodPost, "/v1/workspaces/"+ws+"/snapshots", "")
	*took += time.Since(start)
	ok(b, r)
	var a snapshotAnswer
	require.NoError(b, json.Unmarshal(r.body, &a))
	return a
}

// changeEvery100th gives 1 % of fillTextTree's files, one a directory, new
// content of their size.
func changeEvery100th(b *testing.B, tree string, files, size int) {
	b.Helper()
	for j := 0; j < files; j += 100 {
		f := filepath.Join(tree, sprintf("d%03d", j/100), sprintf("f%05d", j))
		body := make([]byte, size)
		_, err := rand.Read(body)
		require.NoError(b, err)
		require.NoError(b, os.WriteFile(f, []byte(hex.EncodeToString(body)[:size]), 0o644))
	}
}
