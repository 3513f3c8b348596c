package events

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/service"
)

func testHub(t *testing.T, queueLen int) *hub {
	t.Helper()
	m, err := newMetrics(prometheus.NewRegistry())
	require.NoError(t, err)
	return newHub(queueLen, m)
}

func change(workspaceID string) *frame {
	return &frame{change: true, workspaceID: workspaceID, body: []byte(`{"type":"workspace.upserted"}`)}
}

// count is the number of subscribers in the hub.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// drain returns what is queued for s.
func drain(s *subscriber) []*frame {
	var out []*frame
	for {
		select {
		case f := <-s.queue:
			out = append(out, f)
		default:
			return out
		}
	}
}

func TestHubFiltersByWorkspace(t *testing.T) {
	t.Parallel()
	h := testHub(t, 8)
	all, one := h.subscribe(""), h.subscribe("w1")
	require.Equal(t, 2, h.count())
	w1, w2 := change("w1"), change("w2")
	h.publish(w1)
	h.publish(w2)
	h.resyncAll()
	require.Equal(t, []*frame{w1, w2, resyncFrame}, drain(all))
	require.Equal(t, []*frame{w1, resyncFrame}, drain(one), "a filtered subscriber gets its workspace and every resync")
}

func TestHubDropsASubscriberThatFallsBehind(t *testing.T) {
	t.Parallel()
	h := testHub(t, 2)
	slow, fast := h.subscribe(""), h.subscribe("")
	for range 2 {
		h.publish(change("w"))
	}
	require.Len(t, drain(fast), 2)
	h.publish(change("w"))
	select {
	case <-slow.lagged:
	default:
		t.Fatal("the full subscriber is told it lagged")
	}
	require.Len(t, drain(fast), 1, "the other subscriber carries on")
	require.Equal(t, 1, h.count(), "the laggard left the hub")
	h.publish(change("w"))
	require.Len(t, drain(slow), 2, "nothing more is queued for the laggard")
	h.done(slow)
	h.done(fast)
	require.Equal(t, 0, h.count())
}

func TestHubCloseWaitsForConnections(t *testing.T) {
	t.Parallel()
	h := testHub(t, 2)
	s := h.subscribe("")
	closed := make(chan struct{})
	go func() {
		h.close()
		close(closed)
	}()
	<-s.quit
	select {
	case <-closed:
		t.Fatal("close returned before the connection was done")
	default:
	}
	h.done(s)
	<-closed
	require.Nil(t, h.subscribe(""), "a closed hub takes no subscriber")
}

func TestInboxDropsPastItsBound(t *testing.T) {
	t.Parallel()
	b := newInbox(3)
	for i := range 5 {
		b.put(notice{Change: service.Change{ID: string(rune('a' + i))}})
	}
	got, lost := b.take(10)
	require.True(t, lost)
	require.Equal(t, []notice{{Change: service.Change{ID: "d"}}, {Change: service.Change{ID: "e"}}}, got, "what came after the drop is kept, in order")
	got, lost = b.take(10)
	require.False(t, lost)
	require.Empty(t, got)

	for i := range 3 {
		b.put(notice{Change: service.Change{ID: string(rune('a' + i))}})
	}
	got, _ = b.take(2)
	require.Equal(t, []notice{{Change: service.Change{ID: "a"}}, {Change: service.Change{ID: "b"}}}, got)
	got, _ = b.take(2)
	require.Equal(t, []notice{{Change: service.Change{ID: "c"}}}, got)
}

func TestChangeFrames(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	ws := &cairn.Workspace{ID: "w1", Name: "alpha", VolumeState: cairn.VolumeNone, ArtifactCounts: cairn.ArtifactCounts{Recorded: 2}}
	r, err := service.LoadRows(t.Context(), rowsOf{ws}, []service.Change{{Kind: "workspace", ID: "w1"}, {Kind: "artifact", ID: "a1"}})
	require.NoError(t, err)
	for name, c := range map[string]struct {
		n    notice
		body string
	}{
		"Upserted": {notice{Change: service.Change{Kind: "workspace", Op: "UPDATE", ID: "w1", WorkspaceID: "w1"}},
			`{"type":"workspace.upserted","id":"w1","workspace":{"id":"w1","name":"alpha","volume_name":"","volume_state":"NONE",` +
				`"artifact_counts":{"recorded":2,"missing_object":0},"created_at":"0001-01-01T00:00:00Z","updated_at":"0001-01-01T00:00:00Z"},` +
				`"at":"2025-01-02T03:04:05.000006Z"}`},
		"DeletedOp": {notice{Change: service.Change{Kind: "workspace", Op: "DELETE", ID: "w1", WorkspaceID: "w1"}},
			`{"type":"workspace.deleted","id":"w1","at":"2025-01-02T03:04:05.000006Z"}`},
		"GoneByNow": {notice{Change: service.Change{Kind: "artifact", Op: "INSERT", ID: "a1", WorkspaceID: "w1"}},
			`{"type":"artifact.deleted","id":"a1","at":"2025-01-02T03:04:05.000006Z"}`},
	} {
		f, err := frameOf(r, c.n, at)
		require.NoError(t, err, name)
		require.JSONEq(t, c.body, string(f.body), name)
		require.Equal(t, byte('{'), f.body[0], "the writer puts seq after the brace")
		require.True(t, f.change)
		require.Equal(t, "w1", f.workspaceID, "filtered by the notification's workspace")
	}
	_, err = frameOf(r, notice{Change: service.Change{Kind: "volume", Op: "INSERT", ID: "x"}}, at)
	require.Error(t, err)
}

// rowsOf loads the workspaces it holds, and no artifact.
type rowsOf []*cairn.Workspace

func (r rowsOf) WorkspacesByID(context.Context, []string) ([]*cairn.Workspace, error) { return r, nil }
func (rowsOf) ArtifactsByID(context.Context, []string) ([]*cairn.Artifact, error)     { return nil, nil }
func (rowsOf) SnapshotsByID(context.Context, []string) ([]*cairn.Snapshot, error)     { return nil, nil }
