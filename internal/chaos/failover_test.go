//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// failoverRecovery is the longest the service may answer 503 after its
// primary database dies and the standby is promoted.
const failoverRecovery = 10 * time.Second

// TestPostgresFailover kills the primary database (SIGKILL) under a steady
// stream of workspace creates and promotes its synchronous standby at once,
// the server running all along on both hosts. It measures the window of
// answers that were not a success, which must all be 503
// database_unavailable and end within failoverRecovery, and checks that
// every acknowledged create, and an artifact stored before, is on the new
// primary; that the events subscriber is told to resync on its open
// connection and learns of an artifact flagged MISSING across the
// failover; and that the maintainer is elected again.
func TestPostgresFailover(t *testing.T) {
	t.Setenv("LOG_LEVEL", "info") // the maintainer's elections are logged at info
	pair := stacktest.Replicated(t)
	srv := stacktest.StartServer(t, stacktest.ServerOptions{Maintainer: true, Replicated: pair,
		Config: "maintenance: {sweepIntSec: 2}\n"})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server output:\n%s", srv.Output())
		}
	})
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ctx := t.Context()

	ws, err := api.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "kept"})
	require.NoError(t, err)
	keptArtifacts := map[string]string{}
	art := upload(t, api, ws.ID, smallFile(t, "lost_csv"), "lost_csv", map[string]string{})
	upload(t, api, ws.ID, smallFile(t, "kept_csv"), "kept_csv", keptArtifacts)
	frames := subscribe(t, api, ws.ID)
	waitOutput(t, srv, "became the maintainer leader", 1)

	w := startWriters(t, srv, 4)
	w.waitAcked(t, 20)
	killedAt := time.Now()
	inFlight := w.running()
	pair.Primary.Kill()
	require.NoError(t, pair.Standby.Promote(ctx))
	t.Logf("killed the primary; the standby took writes %s later", time.Since(killedAt).Round(time.Millisecond))

	// Lost while the server may not have found the new primary yet: its
	// flagging reaches the subscriber as a change frame or after a resync.
	srv.LoseObject(t, art.ID, art.ObjectKey)
	w.waitAckedSince(t, killedAt, 20, 2*failoverRecovery)
	sweep(t, srv)
	frames.waitMissing(t, api, art)
	waitOutput(t, srv, "became the maintainer leader", 2)
	require.Contains(t, srv.Output(), "lost the maintainer leader session")
	answers := w.stop()

	window, failures := failoverWindow(answers, killedAt)
	for _, f := range failures {
		t.Errorf("%s: %s", f.name, f.problem)
	}
	require.LessOrEqual(t, window, failoverRecovery, "503s for longer than %s after the kill", failoverRecovery)
	acked := ackedIDs(answers)
	inFlightAcked := 0
	for _, a := range answers {
		if a.began.Before(killedAt) && a.ended.After(killedAt) && a.id != "" {
			inFlightAcked++
		}
	}
	t.Logf("%d creates, %d acknowledged, %d answered 503, window %s", len(answers), len(acked),
		len(answers)-len(acked), window.Round(time.Millisecond))
	lost := missingWorkspaces(t, srv, pair.Standby.Port, acked) +
		lostArtifacts(t, srv, keptArtifacts)
	record(t, Row{
		Fault:        "kill -9 Postgres primary, promote standby",
		InFlight:     inFlight,
		Acknowledged: inFlightAcked,
		Lost:         lost,
		Leaked:       leaks(t, srv),
		Recovery:     window,
	})
}

// answer is one workspace create as the client saw it.
type answer struct {
	name         string
	began, ended time.Time
	status       int    // 0: no HTTP answer
	reason       string // of a failure
	id           string // of an acknowledged create
	problem      string // a transport failure
}

// writePace is the least time between two creates of one writer: a steady
// stream that leaves the machine's cores to the server and the databases.
const writePace = 20 * time.Millisecond

// writers create workspaces, each writer one at a time, until stopped.
type writers struct {
	srv    *stacktest.Server
	stopCh chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	answers []answer
	busy    map[string]bool // names of the creates in flight
	changed chan struct{}   // closed and replaced on every answer
}

func startWriters(t *testing.T, srv *stacktest.Server, n int) *writers {
	w := &writers{srv: srv, stopCh: make(chan struct{}), busy: map[string]bool{}, changed: make(chan struct{})}
	for i := range n {
		w.wg.Go(func() { w.run(i) })
	}
	t.Cleanup(func() { w.stop() })
	return w
}

func (w *writers) run(writer int) {
	pace := time.NewTicker(writePace)
	defer pace.Stop()
	for seq := 0; ; seq++ {
		select {
		case <-w.stopCh:
			return
		case <-pace.C:
		}
		name := fmt.Sprintf("w%d-%05d", writer, seq)
		w.mu.Lock()
		w.busy[name] = true
		w.mu.Unlock()
		a := w.create(name)
		w.mu.Lock()
		delete(w.busy, name)
		w.answers = append(w.answers, a)
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
}

// create sends one create; 30 s without an answer counts as a hang.
func (w *writers) create(name string) (a answer) {
	a = answer{name: name, began: time.Now()}
	defer func() { a.ended = time.Now() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.srv.URL+"/v1/workspaces",
		strings.NewReader(fmt.Sprintf(`{"name":%q}`, name)))
	if err != nil {
		a.problem = err.Error()
		return a
	}
	req.Header.Set("Authorization", "Bearer "+w.srv.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.problem = "no answer: " + err.Error()
		return a
	}
	defer resp.Body.Close()
	a.status = resp.StatusCode
	var body struct {
		Workspace *cairn.Workspace `json:"workspace"`
		Error     struct {
			Reason string `json:"reason"`
		} `json:"error"`
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		a.problem = "read the answer: " + err.Error()
		return a
	}
	if err := json.Unmarshal(buf.Bytes(), &body); err != nil {
		a.problem = fmt.Sprintf("decode %q: %v", buf.String(), err)
		return a
	}
	switch {
	case resp.StatusCode == http.StatusOK && body.Workspace != nil:
		a.id = body.Workspace.ID
	case resp.StatusCode == http.StatusOK:
		a.problem = "200 without a workspace: " + buf.String()
	default:
		a.reason = body.Error.Reason
	}
	return a
}

// running counts the creates in flight now.
func (w *writers) running() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.busy)
}

// waitAcked waits for n acknowledged creates.
func (w *writers) waitAcked(t *testing.T, n int) {
	t.Helper()
	w.waitAckedSince(t, time.Time{}, n, time.Minute)
}

// waitAckedSince waits, at most within, for n acknowledged creates sent
// after since.
func (w *writers) waitAckedSince(t *testing.T, since time.Time, n int, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for {
		w.mu.Lock()
		got := 0
		for _, a := range w.answers {
			if a.id != "" && !a.began.Before(since) {
				got++
			}
		}
		changed := w.changed
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%d of %d creates acknowledged within %s", got, n, within)
		}
	}
}

// stop ends the writers and returns every answer. Idempotent.
func (w *writers) stop() []answer {
	select {
	case <-w.stopCh:
	default:
		close(w.stopCh)
	}
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]answer(nil), w.answers...)
}

// failoverWindow is the time from the kill to the last answer that was
// not a success, and the answers that were neither a success nor 503
// database_unavailable.
func failoverWindow(answers []answer, killedAt time.Time) (time.Duration, []answer) {
	var window time.Duration
	var bad []answer
	for _, a := range answers {
		if a.id != "" {
			continue
		}
		window = max(window, a.ended.Sub(killedAt))
		switch {
		case a.problem != "":
		case a.status != http.StatusServiceUnavailable || a.reason != string(cairn.ReasonDatabaseUnavailable):
			a.problem = fmt.Sprintf("answered %d %s", a.status, a.reason)
		default:
			continue
		}
		bad = append(bad, a)
	}
	return window, bad
}

func ackedIDs(answers []answer) []string {
	var ids []string
	for _, a := range answers {
		if a.id != "" {
			ids = append(ids, a.id)
		}
	}
	return ids
}

// missingWorkspaces counts the acknowledged workspaces that the new
// primary, the promoted standby on port, does not hold.
func missingWorkspaces(t *testing.T, srv *stacktest.Server, port int, ids []string) int {
	t.Helper()
	conn := database(t, srv)
	var at int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT inet_server_port()").Scan(&at))
	require.Equal(t, port, at, "the server's database is the promoted standby now")
	var found int
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM workspaces WHERE id = ANY($1)", ids).Scan(&found))
	return len(ids) - found
}

// waitOutput waits until the server has printed line at least n times.
func waitOutput(t *testing.T, srv *stacktest.Server, line string, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for strings.Count(srv.Output(), line) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the server printed %q fewer than %d times in 30 s; output:\n%s", line, n, srv.Output())
		}
		time.Sleep(50 * time.Millisecond) // polling a log: the process announces nothing else
	}
}

// subscriber is an events subscription read in the background.
type subscriber struct {
	frames chan cairn.Event
	errs   chan error
}

// subscribe opens an events subscription to one workspace and waits for
// its hello.
func subscribe(t *testing.T, api *client.Client, workspaceID string) *subscriber {
	t.Helper()
	stream, err := api.Events(t.Context(), cairn.EventFilter{WorkspaceID: workspaceID})
	require.NoError(t, err)
	t.Cleanup(func() { _ = stream.Close() })
	s := &subscriber{frames: make(chan cairn.Event, 1024), errs: make(chan error, 16)}
	go func() {
		for {
			ev, err := stream.Next(context.Background())
			if errors.Is(err, client.ErrStreamClosed) {
				return
			}
			if err != nil {
				s.errs <- err
				continue
			}
			s.frames <- ev
		}
	}()
	select {
	case ev := <-s.frames:
		require.Equal(t, cairn.EventHello, ev.Type)
	case err := <-s.errs:
		t.Fatal(err)
	case <-time.After(30 * time.Second):
		t.Fatal("no hello within 30 s")
	}
	return s
}

// waitMissing follows the consumer's rule — list again on resync, apply
// change frames — until art is known MISSING_OBJECT, and requires that
// the server sent a resync on the same connection (its LISTEN connection
// was lost and regained) and that the connection never dropped.
func (s *subscriber) waitMissing(t *testing.T, api *client.Client, art *cairn.Artifact) {
	t.Helper()
	resynced, missing := false, false
	deadline := time.After(30 * time.Second)
	for !resynced || !missing {
		select {
		case ev := <-s.frames:
			switch {
			case ev.Type == cairn.EventResync:
				resynced = true
				missing = listedMissing(t, api, art)
			case ev.Type == cairn.EventArtifactUpserted && ev.ID == art.ID:
				missing = ev.Artifact.State == cairn.ArtifactMissingObject
			}
		case err := <-s.errs:
			t.Fatalf("the events connection dropped during the failover: %v", err)
		case <-deadline:
			t.Fatalf("within 30 s: resync %v, artifact known missing %v", resynced, missing)
		}
	}
}

// listedMissing lists the artifact's workspace, as a subscriber does on
// resync, and reports whether the artifact is MISSING_OBJECT.
func listedMissing(t *testing.T, api *client.Client, art *cairn.Artifact) bool {
	t.Helper()
	list, err := api.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: art.WorkspaceID,
		States: []cairn.ArtifactState{cairn.ArtifactRecorded, cairn.ArtifactMissingObject}})
	require.NoError(t, err, "list after resync")
	for _, a := range list {
		if a.ID == art.ID {
			return a.State == cairn.ArtifactMissingObject
		}
	}
	t.Fatalf("artifact %s is not listed", art.ID)
	return false
}
