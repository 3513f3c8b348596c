package client_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

// eventWait bounds one Next in these tests; a failure deadline only.
const eventWait = 60 * time.Second

// eventsStack is a database and bucket on which real servers are started
// and stopped, the same port each time.
type eventsStack struct {
	cfg    server.Config
	secret server.Secrets
}

func newEventsStack(t *testing.T, tokens ...server.TokenConfig) *eventsStack {
	t.Helper()
	pg, gw, dsn := stacktest.Postgres(t), stacktest.S3(t), stacktest.Database(t)
	cfg := server.DefaultConfig()
	cfg.AppName = stacktest.AppName(t)
	cfg.Persistence.SQL.App.Host, cfg.Persistence.SQL.App.Port = pg.Host, pg.Port
	cfg.Persistence.SQL.App.User = pg.User
	cfg.Persistence.SQL.App.DB = dsn[strings.LastIndex(dsn, "/")+1 : strings.Index(dsn, "?")]
	cfg.API.Service.ListenOn, cfg.API.Service.AppPort = "127.0.0.1", 0
	cfg.Metrics.Service.ListenOn, cfg.Metrics.Service.AppPort = "127.0.0.1", 0
	cfg.Artifact.S3.Endpoint, cfg.Artifact.S3.UseTLS, cfg.Artifact.S3.Region = gw.Endpoint, false, gw.Region
	cfg.Artifact.Store.Bucket = stacktest.Bucket(t)
	cfg.Artifact.Sidecar.Image = stacktest.Image(t)
	cfg.Auth.Tokens = tokens
	return &eventsStack{cfg: cfg, secret: server.Secrets{SQLPassword: pg.Password, S3AccessKey: gw.AccessKey, S3SecretKey: gw.SecretKey}}
}

// start runs a server; the first picks a free port, later ones reuse it.
// stop ends it (also at the end of the test).
func (s *eventsStack) start(t *testing.T) (base string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, s.cfg, s.secret, server.Options{})
	require.NoError(t, err)
	_, port, err := net.SplitHostPort(srv.APIAddr())
	require.NoError(t, err)
	s.cfg.API.Service.AppPort, err = strconv.Atoi(port)
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	done := false
	stop = func() {
		if done {
			return
		}
		done = true
		cancel()
		require.NoError(t, <-served)
		srv.Close()
	}
	t.Cleanup(stop)
	return "http://" + srv.APIAddr(), stop
}

func next(t *testing.T, s cairn.EventStream) (cairn.Event, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), eventWait)
	defer cancel()
	return s.Next(ctx)
}

// seen makes changes through c until one reaches the stream (a listener
// that was not up yet answers resync, then a new change is made), skipping
// other frames.
func seen(t *testing.T, c *client.Client, s cairn.EventStream) *cairn.Workspace {
	t.Helper()
	for {
		ws, err := c.CreateWorkspace(context.Background(), cairn.WorkspaceCreate{Name: "w-" + strings.ToLower(ulid.Make().String())})
		require.NoError(t, err)
		for {
			ev, err := next(t, s)
			require.NoError(t, err)
			if ev.Type == cairn.EventWorkspaceUpserted && ev.ID == ws.ID {
				require.Equal(t, ws, ev.Workspace)
				return ws
			}
			if ev.Type == cairn.EventResync {
				break
			}
		}
	}
}

// TestEventsAcrossARestart: a stream outlives its server. The loss is
// reported once as *cairn.DisconnectedError; the stream redials on its own
// and, once the server is back, delivers its hello, a resync, then new
// changes.
func TestEventsAcrossARestart(t *testing.T) {
	t.Parallel()
	st := newEventsStack(t)
	base, stop := st.start(t)
	c, err := client.New(base)
	require.NoError(t, err)
	stream, err := c.Events(context.Background(), cairn.EventFilter{})
	require.NoError(t, err)
	defer func() { _ = stream.Close() }() // nothing to report at the end

	ev, err := next(t, stream)
	require.NoError(t, err)
	require.Equal(t, cairn.EventHello, ev.Type)
	require.WithinDuration(t, time.Now(), ev.ServerTime, time.Minute)
	seen(t, c, stream)

	stop()
	_, err = next(t, stream)
	var lost *cairn.DisconnectedError
	require.ErrorAs(t, err, &lost)
	require.InDelta(t, 250*time.Millisecond, lost.RetryIn, float64(50*time.Millisecond), "the first wait is 250 ms ±20 percent")

	_, stop = st.start(t)
	defer stop()
	for {
		ev, err = next(t, stream)
		if err == nil {
			break
		}
		require.ErrorAs(t, err, &lost, "while the server is coming back")
	}
	require.Equal(t, cairn.EventHello, ev.Type)
	ev, err = next(t, stream)
	require.NoError(t, err)
	require.Equal(t, cairn.EventResync, ev.Type, "a resync follows every reconnect")
	seen(t, c, stream)
}

func TestEventsFilterAndRefusals(t *testing.T) {
	t.Parallel()
	const reader, writer = "events-reader-0123456789abcdef", "events-writer-0123456789abcdef"
	st := newEventsStack(t,
		server.TokenConfig{Name: "reader", SHA256: hashOf(reader), Scopes: []string{"read", "write"}},
		server.TokenConfig{Name: "writer", SHA256: hashOf(writer), Scopes: []string{"write"}})
	base, _ := st.start(t)
	ctx := context.Background()
	c, err := client.New(base, client.WithToken(reader))
	require.NoError(t, err)

	t.Run("Filter", func(t *testing.T) {
		all, err := c.Events(ctx, cairn.EventFilter{})
		require.NoError(t, err)
		defer func() { _ = all.Close() }() // nothing to report at the end
		hello, err := next(t, all)
		require.NoError(t, err)
		require.Equal(t, cairn.EventHello, hello.Type)
		one := seen(t, c, all)
		other := seen(t, c, all)
		filtered, err := c.Events(ctx, cairn.EventFilter{WorkspaceID: one.ID})
		require.NoError(t, err)
		defer func() { _ = filtered.Close() }() // nothing to report at the end
		ev, err := next(t, filtered)
		require.NoError(t, err)
		require.Equal(t, cairn.EventHello, ev.Type)
		_, err = c.RenameWorkspace(ctx, other.ID, "other")
		require.NoError(t, err)
		_, err = c.RenameWorkspace(ctx, one.ID, "one")
		require.NoError(t, err)
		ev, err = next(t, filtered)
		require.NoError(t, err)
		require.Equal(t, cairn.EventWorkspaceUpserted, ev.Type)
		require.Equal(t, "one", ev.Workspace.Name, "the other workspace's rename is filtered out")
		require.EqualValues(t, 1, ev.Seq)
	})
	for name, c := range map[string]struct {
		token  string
		status int
		reason cairn.Reason
	}{
		"NoToken":     {"", http.StatusUnauthorized, cairn.ReasonUnauthenticated},
		"NoReadScope": {writer, http.StatusForbidden, cairn.ReasonForbidden},
	} {
		t.Run(name, func(t *testing.T) {
			cl, err := client.New(base, client.WithToken(c.token))
			require.NoError(t, err)
			stream, err := cl.Events(ctx, cairn.EventFilter{})
			require.NoError(t, err)
			defer func() { _ = stream.Close() }() // nothing to report at the end
			for range 2 {                         // permanent: no redial, the same error every time
				_, err = next(t, stream)
				var e *cairn.Error
				require.ErrorAs(t, err, &e)
				require.Equal(t, c.status, e.Status)
				require.Equal(t, c.reason, e.Reason)
				var lost *cairn.DisconnectedError
				require.False(t, errors.As(err, &lost))
			}
		})
	}
}

func hashOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// fakeEvents is a websocket server for the stream's own mechanics: each
// connection gets the frames of serve, then is closed.
func fakeEvents(t *testing.T, serve func(conn *websocket.Conn)) *client.Client {
	t.Helper()
	up := websocket.Upgrader{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = conn.Close() }() // the test is over either way
		serve(conn)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	require.NoError(t, err)
	return c
}

func TestEventsStreamMechanics(t *testing.T) {
	t.Parallel()
	t.Run("FramesBeforeTheLossComeFirst", func(t *testing.T) {
		t.Parallel()
		c := fakeEvents(t, func(conn *websocket.Conn) {
			for _, f := range []string{`{"type":"hello","server_time":"2025-01-01T00:00:00Z"}`,
				`{"seq":1,"type":"workspace.deleted","id":"w1","at":"2025-01-01T00:00:00Z"}`, `{"type":"resync"}`} {
				_ = conn.WriteMessage(websocket.TextMessage, []byte(f)) // the client's reads tell
			}
			_ = conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.ClosePolicyViolation, "fell behind"))
		})
		stream, err := c.Events(context.Background(), cairn.EventFilter{})
		require.NoError(t, err)
		defer func() { _ = stream.Close() }() // nothing to report at the end
		var types []cairn.EventType
		for range 3 {
			ev, err := next(t, stream)
			require.NoError(t, err)
			types = append(types, ev.Type)
		}
		require.Equal(t, []cairn.EventType{cairn.EventHello, cairn.EventWorkspaceDeleted, cairn.EventResync}, types)
		_, err = next(t, stream)
		var lost *cairn.DisconnectedError
		require.ErrorAs(t, err, &lost)
		var ce *websocket.CloseError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, websocket.ClosePolicyViolation, ce.Code)
	})
	t.Run("BackoffDoubles", func(t *testing.T) {
		t.Parallel()
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close()) // nothing listens: every dial is refused
		c, err := client.New("http://" + addr)
		require.NoError(t, err)
		stream, err := c.Events(context.Background(), cairn.EventFilter{})
		require.NoError(t, err)
		defer func() { _ = stream.Close() }() // nothing to report at the end
		for _, want := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second} {
			_, err := next(t, stream)
			var lost *cairn.DisconnectedError
			require.ErrorAs(t, err, &lost)
			require.True(t, client.IsUnreachable(err), "%v", err)
			require.InDelta(t, want, lost.RetryIn, 0.2*float64(want)+1)
		}
	})
	t.Run("CloseUnblocksNext", func(t *testing.T) {
		t.Parallel()
		hold := make(chan struct{})
		c := fakeEvents(t, func(conn *websocket.Conn) {
			_ = conn.WriteMessage(websocket.TextMessage, []byte(`{"type":"hello","server_time":"2025-01-01T00:00:00Z"}`))
			<-hold
		})
		defer close(hold)
		stream, err := c.Events(context.Background(), cairn.EventFilter{})
		require.NoError(t, err)
		_, err = next(t, stream)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() {
			_, err := stream.Next(context.Background())
			got <- err
		}()
		require.NoError(t, stream.Close())
		require.ErrorIs(t, <-got, client.ErrStreamClosed)
		_, err = stream.Next(context.Background())
		require.ErrorIs(t, err, client.ErrStreamClosed)
	})
	t.Run("EndsWithItsContext", func(t *testing.T) {
		t.Parallel()
		c := fakeEvents(t, func(*websocket.Conn) {})
		ctx, cancel := context.WithCancel(context.Background())
		stream, err := c.Events(ctx, cairn.EventFilter{})
		require.NoError(t, err)
		cancel()
		_, err = stream.Next(context.Background())
		require.ErrorIs(t, err, client.ErrStreamClosed)
	})
}
