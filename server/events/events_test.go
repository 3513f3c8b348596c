package events_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// upload stores a small file as a new artifact through r.
func upload(t *testing.T, r *running, wsID, name string) *cairn.Artifact {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte("hello "+name+"\n"), 0o600))
	a, err := r.client.Upload(context.Background(), wsID, path, client.UploadOptions{})
	require.NoError(t, err)
	return a
}

type change struct {
	typ cairn.EventType
	id  string
}

// TestAcrossServers: changes made through server A reach subscribers of
// server B, with the rows as REST shows them; workspace_id filters to the
// workspace and its artifacts. Each step waits until the unfiltered
// subscriber has its frames, so every row is loaded before the next change
// and the frames are exact.
func TestAcrossServers(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	a, bb := b.start(t, 0), b.start(t, 0)
	ctx := context.Background()
	all := subscribe(t, bb.base, dialOptions{})
	live(t, a, all)
	step := func(want ...change) []cairn.Event {
		t.Helper()
		var got []cairn.Event
		for range want {
			got = append(got, all.next(t))
		}
		require.Equal(t, want, changesOf(got))
		return got
	}

	alpha, err := a.client.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "alpha"})
	require.NoError(t, err)
	ev := step(change{cairn.EventWorkspaceUpserted, alpha.ID})
	require.Equal(t, alpha, ev[0].Workspace, "the row as REST shows it")
	beta, err := a.client.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "beta"})
	require.NoError(t, err)
	step(change{cairn.EventWorkspaceUpserted, beta.ID})

	filtered := subscribe(t, bb.base, dialOptions{query: url.Values{"workspace_id": {alpha.ID}}})
	_, err = a.client.RenameWorkspace(ctx, beta.ID, "beta2")
	require.NoError(t, err)
	step(change{cairn.EventWorkspaceUpserted, beta.ID})
	renamed, err := a.client.RenameWorkspace(ctx, alpha.ID, "alpha2")
	require.NoError(t, err)
	step(change{cairn.EventWorkspaceUpserted, alpha.ID})
	betaArt := upload(t, a, beta.ID, "b.txt")
	step(change{cairn.EventArtifactUpserted, betaArt.ID}, change{cairn.EventWorkspaceUpserted, beta.ID})
	alphaArt := upload(t, a, alpha.ID, "a.txt")
	step(change{cairn.EventArtifactUpserted, alphaArt.ID}, change{cairn.EventWorkspaceUpserted, alpha.ID})
	require.NoError(t, a.client.DeleteArtifact(ctx, alphaArt.ID))
	step(change{cairn.EventArtifactDeleted, alphaArt.ID}, change{cairn.EventWorkspaceUpserted, alpha.ID})
	require.NoError(t, a.client.DeleteWorkspace(ctx, beta.ID))
	step(change{cairn.EventWorkspaceDeleted, beta.ID}, change{cairn.EventArtifactDeleted, betaArt.ID}) // the cascade notifies
	require.NoError(t, a.client.DeleteWorkspace(ctx, alpha.ID))
	step(change{cairn.EventWorkspaceDeleted, alpha.ID})

	var got []cairn.Event
	for range 6 {
		got = append(got, filtered.next(t))
	}
	require.Equal(t, []change{
		{cairn.EventWorkspaceUpserted, alpha.ID}, // the rename
		{cairn.EventArtifactUpserted, alphaArt.ID},
		{cairn.EventWorkspaceUpserted, alpha.ID}, // its count
		{cairn.EventArtifactDeleted, alphaArt.ID},
		{cairn.EventWorkspaceUpserted, alpha.ID}, // its count
		{cairn.EventWorkspaceDeleted, alpha.ID},
	}, changesOf(got), "only alpha's frames, in order")
	require.Equal(t, renamed, got[0].Workspace)
	require.Equal(t, alphaArt, got[1].Artifact)
	require.Equal(t, cairn.ArtifactCounts{Recorded: 1}, got[2].Workspace.ArtifactCounts)
	require.Equal(t, cairn.ArtifactCounts{}, got[4].Workspace.ArtifactCounts)
	for _, ev := range []cairn.Event{got[3], got[5]} {
		require.Nil(t, ev.Workspace, "a delete carries only its id")
		require.Nil(t, ev.Artifact)
	}
}

func changesOf(evs []cairn.Event) []change {
	out := make([]change, len(evs))
	for i, ev := range evs {
		out[i] = change{ev.Type, ev.ID}
	}
	return out
}

// TestMaintainerFlagReachesSubscribers: an object removed from the store
// behind cairn's back, then a maintainer pass: a subscriber that made no
// request sees the artifact turn MISSING_OBJECT and the workspace's
// missing count go up.
func TestMaintainerFlagReachesSubscribers(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	a, bb := b.start(t, 0), b.start(t, 0)
	ctx := context.Background()
	s := subscribe(t, bb.base, dialOptions{})
	live(t, a, s)

	ws, err := a.client.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "ws"})
	require.NoError(t, err)
	art := upload(t, a, ws.ID, "report.csv")
	s.until(t, is(cairn.EventArtifactUpserted, art.ID))
	ev := s.until(t, is(cairn.EventWorkspaceUpserted, ws.ID))
	require.Equal(t, cairn.ArtifactCounts{Recorded: 1}, ev.Workspace.ArtifactCounts)

	_, err = b.gw.Client().DeleteObject(ctx, &awss3.DeleteObjectInput{Bucket: &b.cfg.Artifact.Store.Bucket, Key: &art.ObjectKey})
	require.NoError(t, err)
	// Past the maintainer's grace for fresh content.
	_, err = b.db.Exec(ctx, `UPDATE artifacts SET content_written_at = now() - interval '1 day' WHERE id = $1`, art.ID)
	require.NoError(t, err)
	res, err := a.client.Sweep(ctx, ws.ID)
	require.NoError(t, err)
	require.Equal(t, 1, res.ArtifactsFlagged)

	ev = s.until(t, func(ev cairn.Event) bool {
		return ev.Type == cairn.EventArtifactUpserted && ev.ID == art.ID && ev.Artifact.State == cairn.ArtifactMissingObject
	})
	require.Equal(t, ws.ID, ev.Artifact.WorkspaceID)
	ev = s.until(t, is(cairn.EventWorkspaceUpserted, ws.ID))
	require.Equal(t, cairn.ArtifactCounts{MissingObject: 1}, ev.Workspace.ArtifactCounts)
}

// TestListenConnectionLoss: when server B's LISTEN session is terminated,
// its subscribers get resync once it is back, and later changes arrive.
func TestListenConnectionLoss(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	a, bb := b.start(t, 0), b.start(t, 0)
	ctx := context.Background()
	s := subscribe(t, bb.base, dialOptions{})
	onA := subscribe(t, a.base, dialOptions{})
	live(t, a, s, onA)

	tag, err := b.db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, "cairn-events "+bb.srv.APIAddr())
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected(), "server B has one LISTEN session")
	s.until(t, func(ev cairn.Event) bool { return ev.Type == cairn.EventResync })

	ws, err := a.client.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "after"})
	require.NoError(t, err)
	s.until(t, is(cairn.EventWorkspaceUpserted, ws.ID))
	ev := onA.next(t)
	require.Equal(t, change{cairn.EventWorkspaceUpserted, ws.ID}, change{ev.Type, ev.ID}, "server A lost nothing")
}

// TestSlowSubscriber: of two subscribers on one server, the one that never
// reads is sent resync and closed, the other receives every one of 5 000
// changes in order with contiguous seq.
func TestSlowSubscriber(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	r := b.start(t, 0)
	ctx := context.Background()
	slow := subscribe(t, r.base, dialOptions{rcvBuf: 4096})
	fast := subscribe(t, r.base, dialOptions{})
	live(t, r, fast, slow) // slow reads until its listener is up, then never again

	resyncs := metric(t, r, "cairn_event_resyncs_total")
	// In batches of 1 000, each read by the fast subscriber before the
	// next is committed: it never has more than a batch outstanding, well
	// inside its queue, however slowly a loaded machine runs it; the slow
	// one has all 5 000, past its queue.
	const n, batch = 5000, 1000
	for first := 1; first <= n; first += batch {
		_, err := b.db.Exec(ctx, `INSERT INTO workspaces (id, name, volume_name, volume_state, created_at, updated_at)
			SELECT id, 'bulk-' || lpad(i::text, 5, '0'), 'x-' || id, 'NONE', now(), now()
			  FROM (SELECT i, gen_random_uuid()::text AS id FROM generate_series($1::int, $2::int) i) g ORDER BY i`,
			first, first+batch-1)
		require.NoError(t, err)
		for i := first; i < first+batch; i++ {
			ev := fast.next(t)
			require.Equal(t, cairn.EventWorkspaceUpserted, ev.Type, "no resync for a subscriber that keeps up")
			require.Equal(t, fmt.Sprintf("bulk-%05d", i), ev.Workspace.Name, "in commit order")
		}
	}

	changes, resynced := 0, false
	for {
		_, raw, err := slow.conn.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			require.True(t, errors.As(err, &ce), "closed by the server: %v", err)
			require.Equal(t, websocket.ClosePolicyViolation, ce.Code)
			break
		}
		require.False(t, resynced, "resync is the last frame")
		if string(raw) == `{"type":"resync"}` {
			resynced = true
			continue
		}
		changes++
	}
	require.True(t, resynced)
	require.Less(t, changes, n)
	t.Logf("the subscriber that did not read was sent %d of %d changes, then resync", changes, n)
	require.Equal(t, resyncs+1, metric(t, r, "cairn_event_resyncs_total"))
}

// metric reads one unlabelled sample of the server's metrics.
func metric(t *testing.T, r *running, name string) float64 {
	t.Helper()
	for line := range strings.Lines(scrape(t, r)) {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			require.NoError(t, err)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// scrape reads the server's metrics.
func scrape(t *testing.T, r *running) string {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://"+r.srv.MetricsAddr()+"/metrics", nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(body)
}

// TestRefusedBeforeTheUpgrade: 401 without a token, 403 without scope
// read, 403 from a foreign Origin, 400 without the websocket handshake —
// all as error envelopes, none upgraded.
func TestRefusedBeforeTheUpgrade(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	reader := b.token("reader", "read")
	writer := b.token("writer", "write", "admin", "shell", "mcp")
	b.cfg.API.CORS.AllowedOrigins = []string{"https://ui.example"}
	r := b.start(t, 0)
	ctx := context.Background()

	for name, c := range map[string]struct {
		o      dialOptions
		status int
		reason string
	}{
		"NoToken":       {dialOptions{}, http.StatusUnauthorized, "unauthenticated"},
		"NoReadScope":   {dialOptions{token: writer}, http.StatusForbidden, "forbidden"},
		"ForeignOrigin": {dialOptions{token: reader, origin: "https://evil.example"}, http.StatusForbidden, "origin_not_allowed"},
	} {
		conn, resp, err := dial(ctx, r.base, c.o)
		require.ErrorIs(t, err, websocket.ErrBadHandshake, name)
		require.Nil(t, conn)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, c.status, resp.StatusCode, "%s: %s", name, body)
		require.Contains(t, string(body), `"reason":"`+c.reason+`"`, name)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.base+"/v1/events", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+reader)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), `"reason":"invalid_parameters"`)
	require.NotEmpty(t, resp.Header.Get("X-Request-ID"))

	subscribe(t, r.base, dialOptions{token: reader, origin: "https://ui.example"}) // an allow-listed origin is served
	require.Equal(t, 1.0, metric(t, r, "cairn_event_subscribers"))
	require.False(t, strings.Contains(scrape(t, r), reader), "no token in metrics")
}
