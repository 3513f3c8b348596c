//go:build chaos

package chaos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// The kill scenario's shape: 20 uploads of two 256 MiB parts each and 10
// ranged downloads of 512 MiB artifacts, all under way when the server
// gets SIGKILL.
const (
	killUploads   = 20
	killDownloads = 10
	killPart      = 256 << 20
	killFile      = 2 * killPart
	// A short URL life lets the test wait out the age-out: the reaper's
	// age must exceed it by the server's one-minute grace.
	killPutURLTTL = 60
	killObjAgeOut = killPutURLTTL + 65
	// killDisk is the free disk the scenario needs, measured: the local
	// files, the store's parts, its assembled objects and the downloads.
	// With 36 GB free the store refused the last assemblies (HTTP 507).
	killDisk = 40 << 30
)

// transfer is one CLI command of the scenario and what became of it.
type transfer struct {
	args   []string
	digest string // the SHA-256 its file has, computed here
	dest   string // a download's destination
	first  *run
	again  *run // the run after the restart, if the first failed
	cut    bool // its first run was still running at the kill
}

// SIGKILL of the server while 20 CLI multipart uploads and 10 CLI
// downloads move their bytes. The server stays down until every command
// has ended on its own, then comes back on the same port, database and
// bucket; each command that failed is run again and must finish by
// resuming. Every artifact holds the digest computed here, every
// download hashes right, and once the kill's leftovers are old enough to
// be reaped, a sweep leaves no object, upload or container behind.
func TestServerKillDuringTransfers(t *testing.T) {
	stacktest.Need(t, fmt.Sprintf("%d GiB of free disk", killDisk>>30), freeDisk(t.TempDir(), killDisk))
	began := time.Now()
	proxy := stacktest.StartStoreProxy(t, stacktest.S3(t).Endpoint)
	opts := stacktest.ServerOptions{PresignEndpoint: proxy.Addr(), MultipartThreshold: killPart, PartSize: killPart,
		PutURLTTLSecs: killPutURLTTL, Config: fmt.Sprintf("maintenance: {objAgeOutSec: %d}\n", killObjAgeOut)}
	srv := stacktest.StartServer(t, opts)
	user := newCLIUser(t, srv)
	var ws struct{ Workspace cairn.Workspace }
	wsName := "kill-" + srv.App
	user.ok(t, "ws", "create", wsName, "-o", "json").json(t, &ws)

	dir := t.TempDir()
	sources, digests := killSources(t, dir)
	preloaded := preload(t, user, wsName, sources[:killDownloads], digests)
	t.Logf("prepared %d files of %d MiB and %d artifacts in %s", killUploads, killFile>>20, killDownloads,
		time.Since(began).Round(time.Second))

	var all []*transfer
	for i, src := range sources {
		all = append(all, &transfer{digest: digests[i], args: []string{"art", "upload", wsName, src,
			"--name", fmt.Sprintf("up-%02d", i), "--multipart-above", "256MiB", "-o", "json"}})
	}
	for i, id := range preloaded {
		dest := filepath.Join(dir, fmt.Sprintf("down-%02d.bin", i))
		all = append(all, &transfer{digest: digests[i], dest: dest, args: []string{"art", "download", id, dest, "-o", "json"}})
	}
	proxy.Reset()
	started := time.Now()
	for _, tr := range all {
		tr.first = user.start(t, tr.args...)
	}
	// The cut: half of all the bytes through the store's proxy.
	inFlight := killAt(t, srv, proxy, all, int64(len(all))*killFile/2)
	killed := time.Now()
	t.Logf("killed after %s with %d MiB moved and %d commands running", killed.Sub(started).Round(time.Millisecond),
		proxy.Moved()>>20, inFlight)

	acknowledged := 0 // of those the kill cut, how many still succeeded
	for _, tr := range all {
		if tr.first.wait() == 0 {
			if tr.cut {
				acknowledged++
			}
			continue
		}
		t.Logf("cairn %v failed (exit %d): %s", tr.args[:2], tr.first.code, tr.first.stderr)
	}
	downFor := time.Since(killed)
	srv.Restart(t, opts)
	recovery := time.Since(killed)
	t.Logf("every first run ended %s after the kill; the server answered again %s after it", downFor.Round(time.Millisecond),
		recovery.Round(time.Millisecond))

	pending := pendingUploads(t, user)
	proxy.Reset()
	resumed := rerunFailed(t, user, all)
	t.Logf("the runs again sent %d MiB and received %d MiB", proxy.Up()>>20, proxy.Down()>>20)
	acked := map[string]string{}
	for i, id := range preloaded {
		acked[id] = digests[i]
	}
	for _, tr := range all {
		last := tr.last()
		if tr.dest != "" {
			require.Equal(t, tr.digest, stacktest.FileSHA256(t, tr.dest), "download %s hashes right", tr.dest)
			require.NoFileExists(t, tr.dest+".part")
			continue
		}
		var out struct{ Artifact cairn.Artifact }
		last.json(t, &out)
		require.NotNil(t, out.Artifact.SHA256B64)
		require.Equal(t, tr.digest, *out.Artifact.SHA256B64, "cairn %v answered the file's digest", tr.args[:4])
		if key, ok := pending[tr.args[3]]; ok {
			require.Equal(t, key, out.Artifact.ObjectKey, "cairn %v resumed its upload rather than starting over", tr.args[:4])
		}
		acked[out.Artifact.ID] = tr.digest
	}
	lost := lostArtifacts(t, srv, acked)
	left, err := filepath.Glob(filepath.Join(user.state, "cairn", "uploads", "*.json"))
	require.NoError(t, err)
	require.Empty(t, left, "no resume state is left once every upload is registered")
	t.Logf("all %d commands finished %s after the kill", len(all), time.Since(killed).Round(time.Millisecond))

	// Whatever the kill orphaned (an upload begun by a mint whose answer
	// was lost, an object assembled by a register that never wrote its
	// row) is reaped once older than the age-out; wait until anything
	// the killed process made is, then sweep.
	time.Sleep(time.Until(killed.Add(killObjAgeOut*time.Second + time.Second))) // waiting out a configured age, not another process
	sweep(t, srv)
	leaked := leaks(t, srv)
	t.Logf("scenario took %s; it needed %d GiB on disk at most (sources, downloads, and the store's copy)",
		time.Since(began).Round(time.Second), (int64(killUploads)*killFile*2+int64(killDownloads)*killFile*2)>>30)
	record(t, Row{Fault: "kill -9 server (30 transfers)", InFlight: inFlight, Acknowledged: acknowledged,
		Resumed: resumed, Lost: lost, Leaked: leaked, Recovery: recovery})
}

// last is the run that finished the transfer.
func (tr *transfer) last() *run {
	if tr.again != nil {
		return tr.again
	}
	return tr.first
}

// killSources writes the scenario's files, two at a time, and returns
// their paths and digests.
func killSources(t *testing.T, dir string) ([]string, []string) {
	t.Helper()
	paths, digests := make([]string, killUploads), make([]string, killUploads)
	var wg sync.WaitGroup
	slots := make(chan struct{}, 2)
	for i := range paths {
		paths[i] = filepath.Join(dir, fmt.Sprintf("src-%02d.bin", i))
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			digests[i] = stacktest.RandomFile(t, paths[i], byte(i), killFile)
		})
	}
	wg.Wait()
	return paths, digests
}

// preload uploads the downloads' artifacts (one PUT each) and returns
// their IDs.
func preload(t *testing.T, user *cliUser, ws string, sources, digests []string) []string {
	t.Helper()
	runs := make([]*run, len(sources))
	for i, src := range sources {
		runs[i] = user.start(t, "art", "upload", ws, src, "--name", fmt.Sprintf("pre-%02d", i), "-o", "json")
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		require.Equal(t, 0, r.wait(), "preload %d: %s", i, r.stderr)
		var out struct{ Artifact cairn.Artifact }
		r.json(t, &out)
		require.Equal(t, digests[i], *out.Artifact.SHA256B64)
		ids[i] = out.Artifact.ID
	}
	return ids
}

// killAt kills the server once the proxy has relayed at bytes, and
// returns how many of the commands were still running then.
func killAt(t *testing.T, srv *stacktest.Server, proxy *stacktest.StoreProxy, all []*transfer, at int64) int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for proxy.Moved() < at {
		require.True(t, time.Now().Before(deadline), "only %d MiB of the %d MiB awaited moved", proxy.Moved()>>20, at>>20)
		time.Sleep(10 * time.Millisecond) // polling a byte count: nothing else announces it
	}
	srv.Kill(t)
	n := 0
	for _, tr := range all {
		if tr.first.running() {
			tr.cut = true
			n++
		}
	}
	return n
}

// rerunFailed runs each command whose first run failed once more, all at
// once, as the user would after the outage; each must finish. It returns
// how many did.
func rerunFailed(t *testing.T, user *cliUser, all []*transfer) int {
	t.Helper()
	n := 0
	for _, tr := range all {
		if tr.first.code != 0 {
			tr.again = user.start(t, tr.args...)
		}
	}
	for _, tr := range all {
		if tr.again == nil {
			continue
		}
		require.Equal(t, 0, tr.again.wait(), "cairn %v run again: %s", tr.args, tr.again.stderr)
		t.Logf("cairn %v run again: %s", tr.args[:2], tr.again.stderr)
		n++
	}
	return n
}

// pendingUploads maps the source of each unfinished upload the user's
// state directory holds to the object key the upload writes.
func pendingUploads(t *testing.T, user *cliUser) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(user.state, "cairn", "uploads", "*.json"))
	require.NoError(t, err)
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		var st struct {
			Source string `json:"source"`
			Key    string `json:"staging_object_key"`
		}
		require.NoError(t, json.Unmarshal(data, &st))
		out[st.Source] = st.Key
	}
	return out
}

// freeDisk says why the file system of dir has less than need bytes free
// for an unprivileged writer; nil when it has them.
func freeDisk(dir string, need uint64) error {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return err
	}
	if free := fs.Bavail * uint64(fs.Bsize); free < need {
		return fmt.Errorf("%s has %.1f GiB free; free some (the Go build cache is a usual culprit: go clean -cache)",
			dir, float64(free)/(1<<30))
	}
	return nil
}
