package events

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// noStore is a Store for tests that never load rows.
type noStore struct{}

func (noStore) WorkspacesByID(context.Context, []string) ([]*cairn.Workspace, error) {
	return nil, errors.New("not loaded in this test")
}

func (noStore) ArtifactsByID(context.Context, []string) ([]*cairn.Artifact, error) {
	return nil, errors.New("not loaded in this test")
}

func (noStore) SnapshotsByID(context.Context, []string) ([]*cairn.Snapshot, error) {
	return nil, nil
}

// served is an Events with the given timers (zero: the defaults) behind a
// test server, its hub published to directly.
func served(t *testing.T, pingInterval, writeTimeout time.Duration) (*Events, string) {
	t.Helper()
	e, err := New(Config{
		Store:        noStore{},
		Connect:      func(context.Context) (*pgx.Conn, error) { return nil, errors.New("no database in this test") },
		Registerer:   prometheus.NewRegistry(),
		PingInterval: pingInterval,
		WriteTimeout: writeTimeout,
	})
	require.NoError(t, err)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	t.Cleanup(e.hub.close)
	return e, "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestPingsAndDropsASilentPeer(t *testing.T) {
	t.Parallel()
	// Pinged often, dropped about 2 s after it falls silent: every write, the
	// hello's too, has 2 s, which a loaded machine's stalls do not reach.
	e, url := served(t, 50*time.Millisecond, 2*time.Second)
	conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(t, err)
	resp.Body.Close()
	defer func() { _ = conn.Close() }() // the test is over either way
	pinged := make(chan struct{}, 1)
	conn.SetPingHandler(func(string) error {
		select {
		case pinged <- struct{}{}:
		default:
		}
		return nil // no pong: the peer has gone silent
	})
	_, hello, err := conn.ReadMessage()
	require.NoError(t, err)
	require.Contains(t, string(hello), `"type":"hello"`)
	readErr := make(chan error, 1)
	go func() {
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				readErr <- err
				return
			}
		}
	}()
	<-pinged
	require.Error(t, <-readErr, "a peer that answers no ping is dropped")
	require.Eventually(t, func() bool { return e.hub.count() == 0 }, 10*time.Second, 10*time.Millisecond)
}

func TestSeqCountsChangesOnly(t *testing.T) {
	t.Parallel()
	e, url := served(t, 0, 0)
	conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(t, err)
	resp.Body.Close()
	defer func() { _ = conn.Close() }() // the test is over either way
	_, _, err = conn.ReadMessage()      // hello; the subscriber is in the hub now
	require.NoError(t, err)
	for _, f := range []*frame{change("w"), resyncFrame, change("w")} {
		e.hub.publish(f)
	}
	var got []string
	for range 3 {
		_, raw, err := conn.ReadMessage()
		require.NoError(t, err)
		got = append(got, string(raw))
	}
	require.Equal(t, []string{
		`{"seq":1,"type":"workspace.upserted"}`, `{"type":"resync"}`, `{"seq":2,"type":"workspace.upserted"}`,
	}, got)
}
