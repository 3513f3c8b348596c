//go:build chaos

package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// The maintainer's sweep interval in the leader scenario, and the work its
// first pass finds: artifacts whose objects vanished, each flagged on its
// own (a HEAD and a transaction), so that the pass runs for seconds, and
// released objects past their grace, to reap.
const (
	leaderInterval = time.Second
	lostObjects    = 1500
	releasedOrphan = 100
)

// TestMaintainerLeaderKilled runs two `cairn maintainer` replicas on one
// database and bucket, lets the leader's pass flag part of many artifacts
// whose objects were deleted behind cairn's back, and kills it (SIGKILL)
// mid-pass. The other replica must take the leader lock within its
// interval and finish the work: every lost artifact ends MISSING_OBJECT
// with exactly one audit event, every released object is reaped once, and
// the new leader's pass reports no error.
func TestMaintainerLeaderKilled(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{PutURLTTLSecs: 5})
	api := apiClient(t, srv)
	staged := time.Now()
	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "leader"})
	require.NoError(t, err)
	lost := uploadMany(t, api, ws.ID, "lost", lostObjects)
	released := uploadMany(t, api, ws.ID, "released", releasedOrphan)
	for _, a := range released {
		require.NoError(t, api.DeleteArtifact(t.Context(), a.ID))
	}
	loseObjects(t, srv, lost)
	ageReleases(t, srv, released)
	t.Logf("%d lost and %d released objects staged in %s", lostObjects, releasedOrphan, time.Since(staged).Round(time.Second))

	cfg := maintainerConfig(t, srv)
	replicas := []*maintainerReplica{startReplica(t, srv, cfg), startReplica(t, srv, cfg)}
	old, heir := electedPair(t, replicas)
	ids := artifactIDs(lost)
	waitFlagged(t, srv, ids, lostObjects/4)

	led := heir.watchLeader(t)
	old.kill(t)
	killedAt := time.Now()
	pendingOrphans := len(presentKeys(t, srv, objectKeys(released)))
	var takeover time.Duration
	select {
	case at := <-led:
		takeover = at.Sub(killedAt)
	case <-time.After(time.Minute):
		t.Fatal("the other replica did not take the leader lock within a minute")
	}
	pass := heir.waitPass(t, time.Minute)

	f := splitFlags(t, srv, ids, killedAt)
	t.Logf("takeover %s after the kill (interval %s); the new leader's pass started %s after it: %v",
		takeover.Round(time.Millisecond), leaderInterval, f.resumedAt.Sub(killedAt).Round(time.Millisecond), pass)
	require.Less(t, f.before, lostObjects, "the kill did not land mid-pass")
	require.Equal(t, "reconciliation pass", pass["msg"], "the new leader's pass: %v", pass)
	require.Equal(t, float64(f.after), pass["artifacts_flagged"], "the new leader flagged what the old one left")
	require.Equal(t, float64(0), pass["errors"], "the new leader's pass failed items")
	require.Equal(t, float64(pendingOrphans), pass["storage_deleted"], "each released object reaped once")
	require.Empty(t, presentKeys(t, srv, objectKeys(released)), "released objects left in the store")
	requireNoReleases(t, srv, objectKeys(released))
	// The replica tries the lock once an interval; the slack is for a
	// loaded machine.
	require.LessOrEqual(t, takeover, leaderInterval+time.Second, "the other replica took over later than its interval")

	record(t, Row{
		Fault:        "kill -9 maintainer leader mid-sweep",
		InFlight:     lostObjects - f.before,
		Acknowledged: f.before,
		Resumed:      f.after,
		Lost:         f.wrong + notMissing(t, srv, ids),
		Leaked:       leaks(t, srv),
		Recovery:     takeover,
	})
}

// uploadMany uploads n small artifacts named prefix-NNNN, eight at a time.
func uploadMany(t *testing.T, api *client.Client, workspaceID, prefix string, n int) []*cairn.Artifact {
	t.Helper()
	path := smallFile(t, prefix+"_csv")
	out := make([]*cairn.Artifact, n)
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		state := t.TempDir()
		g.Go(func() error {
			a, err := api.Upload(t.Context(), workspaceID, path,
				client.UploadOptions{Name: fmt.Sprintf("%s-%04d", prefix, i), StateDir: state})
			out[i] = a
			return err
		})
	}
	require.NoError(t, g.Wait())
	return out
}

// loseObjects deletes the artifacts' objects straight from the store and
// backdates their content in one update, as stacktest's LoseObject does
// for one: the next pass flags every one MISSING_OBJECT.
func loseObjects(t *testing.T, srv *stacktest.Server, list []*cairn.Artifact) {
	t.Helper()
	keys := objectKeys(list)
	for start := 0; start < len(keys); start += 1000 {
		var ids []types.ObjectIdentifier
		for _, k := range keys[start:min(start+1000, len(keys))] {
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(k)})
		}
		out, err := srv.S3.Client().DeleteObjects(t.Context(), &awss3.DeleteObjectsInput{
			Bucket: aws.String(srv.Bucket), Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
		require.NoError(t, err)
		require.Empty(t, out.Errors, "the store refused deletes")
	}
	_, err := database(t, srv).Exec(t.Context(),
		`UPDATE artifacts SET content_written_at = now() - interval '1 day' WHERE id = ANY($1)`, artifactIDs(list))
	require.NoError(t, err)
}

// ageReleases backdates the release of deleted artifacts' objects past the
// grace, so that the next pass reaps them.
func ageReleases(t *testing.T, srv *stacktest.Server, list []*cairn.Artifact) {
	t.Helper()
	tag, err := database(t, srv).Exec(t.Context(),
		`UPDATE released_objects SET released_at = now() - interval '1 day' WHERE object_key = ANY($1)`, objectKeys(list))
	require.NoError(t, err)
	require.EqualValues(t, len(list), tag.RowsAffected())
}

func artifactIDs(list []*cairn.Artifact) []string {
	ids := make([]string, len(list))
	for i, a := range list {
		ids[i] = a.ID
	}
	return ids
}

func objectKeys(list []*cairn.Artifact) []string {
	keys := make([]string, len(list))
	for i, a := range list {
		keys[i] = a.ObjectKey
	}
	return keys
}

// waitFlagged waits, polling the database, until at least n of the
// artifacts are MISSING_OBJECT — the pass is under way — and fails if the
// pass had flagged them all by then.
func waitFlagged(t *testing.T, srv *stacktest.Server, ids []string, n int) {
	t.Helper()
	conn := database(t, srv)
	deadline := time.Now().Add(time.Minute)
	for {
		var flagged int
		require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM artifacts WHERE id = ANY($1) AND state = $2`,
			ids, cairn.ArtifactMissingObject).Scan(&flagged))
		switch {
		case flagged == len(ids):
			t.Fatalf("the pass flagged all %d artifacts before it was seen under way: give it more work", len(ids))
		case flagged >= n:
			return
		case time.Now().After(deadline):
			t.Fatalf("%d of %d artifacts flagged after a minute", flagged, len(ids))
		}
		time.Sleep(5 * time.Millisecond) // polling the database: the pass announces nothing else
	}
}

// flagSplit is how the lost artifacts' flags fell around the kill.
type flagSplit struct {
	before, after int       // artifacts flagged once, by the killed leader or by the new one
	wrong         int       // artifacts flagged never or more than once
	resumedAt     time.Time // the start of the new leader's pass, the time of its flags
}

// splitFlags reads the ARTIFACT_MISSING_OBJECT audit events, which carry
// the start of the pass that wrote them, and splits the artifacts' flags
// at killedAt. An event for another artifact fails the test.
func splitFlags(t *testing.T, srv *stacktest.Server, ids []string, killedAt time.Time) flagSplit {
	t.Helper()
	events := flagEvents(t, srv)
	var f flagSplit
	for _, id := range ids {
		times := events[id]
		delete(events, id)
		switch {
		case len(times) != 1:
			t.Errorf("artifact %s has %d ARTIFACT_MISSING_OBJECT events", id, len(times))
			f.wrong++
		case times[0].Before(killedAt):
			f.before++
		default:
			f.after++
			f.resumedAt = times[0]
		}
	}
	require.Empty(t, events, "flag events for artifacts that were never lost")
	return f
}

// requireNoReleases requires that no released_objects row names keys:
// reaped, or pruned once past the grace.
func requireNoReleases(t *testing.T, srv *stacktest.Server, keys []string) {
	t.Helper()
	var n int
	require.NoError(t, database(t, srv).QueryRow(t.Context(),
		`SELECT count(*) FROM released_objects WHERE object_key = ANY($1)`, keys).Scan(&n))
	require.Zero(t, n, "released rows left for reaped objects")
}

// notMissing counts the artifacts that are not MISSING_OBJECT.
func notMissing(t *testing.T, srv *stacktest.Server, ids []string) int {
	t.Helper()
	var flagged int
	require.NoError(t, database(t, srv).QueryRow(t.Context(),
		`SELECT count(*) FROM artifacts WHERE id = ANY($1) AND state = $2`, ids, cairn.ArtifactMissingObject).Scan(&flagged))
	if flagged != len(ids) {
		t.Errorf("%d of %d lost artifacts are not MISSING_OBJECT", len(ids)-flagged, len(ids))
	}
	return len(ids) - flagged
}

// flagEvents reads the ARTIFACT_MISSING_OBJECT audit events: artifact ID →
// the time of each (the start of the pass that wrote it).
func flagEvents(t *testing.T, srv *stacktest.Server) map[string][]time.Time {
	t.Helper()
	rows, err := database(t, srv).Query(t.Context(), `SELECT metadata ->> 'artifact_id', created_at
		FROM audit_system_events WHERE type = $1`, cairn.AuditArtifactMissing)
	require.NoError(t, err)
	events := map[string][]time.Time{}
	var id string
	var at time.Time
	_, err = pgx.ForEachRow(rows, []any{&id, &at}, func() error {
		events[id] = append(events[id], at)
		return nil
	})
	require.NoError(t, err)
	return events
}

// presentKeys are those of keys that the store lists, read in one listing.
func presentKeys(t *testing.T, srv *stacktest.Server, keys []string) []string {
	t.Helper()
	want := make(map[string]bool, len(keys))
	for _, k := range keys {
		want[k] = true
	}
	var present []string
	pages := awss3.NewListObjectsV2Paginator(srv.S3.Client(), &awss3.ListObjectsV2Input{Bucket: aws.String(srv.Bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(t.Context())
		require.NoError(t, err)
		for _, obj := range page.Contents {
			if want[aws.ToString(obj.Key)] {
				present = append(present, aws.ToString(obj.Key))
			}
		}
	}
	return present
}

// maintainerConfig writes a maintainer config on srv's database, bucket
// and app name, sweeping every leaderInterval.
func maintainerConfig(t *testing.T, srv *stacktest.Server) string {
	t.Helper()
	db, err := pgx.ParseConfig(srv.Database)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "maintainer.yaml")
	require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, `appName: %s
persistence: {sql: {app: {host: %s, port: %d, db: %s, user: %s}}}
metrics: {service: {listenOn: 127.0.0.1, appPort: 0}}
api: {service: {listenOn: 127.0.0.1, appPort: 0}}
artifact:
  s3: {endpoint: "%s", useTLS: false, region: us-east-1}
  store: {bucket: %s, putUrlTTLSecs: 5}
  sidecar: {image: %s}
maintenance: {sweepIntSec: %d, objAgeOutSec: 70}
`, srv.App, db.Host, db.Port, db.Database, db.User, srv.S3.Endpoint, srv.Bucket, stacktest.Image(t),
		int(leaderInterval.Seconds())), 0o600))
	return path
}

// maintainerReplica is one `cairn maintainer` process, logging JSON.
type maintainerReplica struct {
	cmd     *exec.Cmd
	metrics string // base URL of its metrics listener

	mu     sync.Mutex
	passes []map[string]any // its "reconciliation pass" log lines
	more   chan struct{}    // closed and replaced on every pass line
}

// startReplica runs a maintainer with cfg on srv's database and store and
// waits for its metrics listener.
func startReplica(t *testing.T, srv *stacktest.Server, cfg string) *maintainerReplica {
	t.Helper()
	db, err := pgx.ParseConfig(srv.Database)
	require.NoError(t, err)
	m := &maintainerReplica{more: make(chan struct{})}
	m.cmd = exec.Command(stacktest.Binary(t, "cairn"), "maintainer", "-c", cfg, "-l", "info", "-j") //nolint:noctx // stopped with Ctrl-C or killed
	m.cmd.Env = append(os.Environ(), "CAIRN_APP_SQL_PASSWORD="+db.Password,
		"CAIRN_S3_ACCESS_KEY="+srv.S3.AccessKey, "CAIRN_S3_SECRET_KEY="+srv.S3.SecretKey)
	stderr, err := m.cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, m.cmd.Start())
	t.Cleanup(m.stop)
	addr := make(chan string, 1)
	go m.read(stderr, addr)
	select {
	case a := <-addr:
		m.metrics = "http://" + a
	case <-time.After(time.Minute):
		t.Fatal("cairn maintainer did not start")
	}
	return m
}

// read follows the replica's log: it hands on the metrics address and
// keeps the pass lines.
func (m *maintainerReplica) read(r io.Reader, addr chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line["msg"] {
		case "cairn maintainer running":
			addr <- fmt.Sprint(line["metrics"])
		case "reconciliation pass", "reconciliation pass stopped on a database error":
			m.mu.Lock()
			m.passes = append(m.passes, line)
			close(m.more)
			m.more = make(chan struct{})
			m.mu.Unlock()
		}
	}
}

// waitPass waits for the replica's first finished pass and returns its
// log line.
func (m *maintainerReplica) waitPass(t *testing.T, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.After(within)
	for {
		m.mu.Lock()
		more, passes := m.more, m.passes
		m.mu.Unlock()
		if len(passes) > 0 {
			return passes[0]
		}
		select {
		case <-more:
		case <-deadline:
			t.Fatalf("the new leader finished no pass within %s", within)
		}
	}
}

// leader reads the replica's cairn_reconcile_leader gauge.
func (m *maintainerReplica) leader() bool {
	resp, err := http.Get(m.metrics + "/metrics") //nolint:noctx // a loopback probe
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return strings.Contains(string(body), "\ncairn_reconcile_leader 1\n")
}

// watchLeader polls the replica's gauge in the background and sends the
// time it first reports leading.
func (m *maintainerReplica) watchLeader(t *testing.T) <-chan time.Time {
	led := make(chan time.Time, 1)
	go func() {
		for t.Context().Err() == nil {
			if m.leader() {
				led <- time.Now()
				return
			}
			time.Sleep(10 * time.Millisecond) // polling the gauge: the replica announces nothing else
		}
	}()
	return led
}

// kill ends the replica with SIGKILL and reaps it.
func (m *maintainerReplica) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, m.cmd.Process.Kill())
	_ = m.cmd.Wait() // killed: the status says so and nothing more
}

func (m *maintainerReplica) stop() {
	if m.cmd.ProcessState != nil {
		return
	}
	_ = m.cmd.Process.Signal(syscall.SIGINT)
	_ = m.cmd.Wait() // an interrupted maintainer may exit non-zero
}

// electedPair waits until exactly one of two replicas leads and returns
// the leader and the other.
func electedPair(t *testing.T, pair []*maintainerReplica) (leader, other *maintainerReplica) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, b := pair[0].leader(), pair[1].leader()
		switch {
		case a && !b:
			return pair[0], pair[1]
		case b && !a:
			return pair[1], pair[0]
		case a && b:
			t.Fatal("both replicas report leading")
		case time.Now().After(deadline):
			t.Fatal("no replica became the leader within 30 s")
		}
		time.Sleep(10 * time.Millisecond) // polling the gauges: the replicas announce nothing else
	}
}
