package events_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// frameWait bounds the wait for one frame; it is a failure deadline, never
// a synchronisation.
const frameWait = 30 * time.Second

// backend is one database and bucket that several real servers share.
type backend struct {
	pg     *stack.Postgres
	gw     *stack.S3
	dsn    string
	cfg    server.Config
	db     *pgxpool.Pool // behind cairn's back
	tokens map[string]string
}

func newBackend(t testing.TB) *backend {
	t.Helper()
	b := &backend{pg: stacktest.Postgres(t), gw: stacktest.S3(t), dsn: stacktest.Database(t), tokens: map[string]string{}}
	cfg := server.DefaultConfig()
	cfg.AppName = stacktest.AppName(t)
	cfg.Persistence.SQL.App.Host, cfg.Persistence.SQL.App.Port = b.pg.Host, b.pg.Port
	cfg.Persistence.SQL.App.User = b.pg.User
	cfg.Persistence.SQL.App.DB = b.dsn[strings.LastIndex(b.dsn, "/")+1 : strings.Index(b.dsn, "?")]
	cfg.API.Service.ListenOn, cfg.API.Service.AppPort = "127.0.0.1", 0
	cfg.Metrics.Service.ListenOn, cfg.Metrics.Service.AppPort = "127.0.0.1", 0
	cfg.Artifact.S3.Endpoint, cfg.Artifact.S3.UseTLS, cfg.Artifact.S3.Region = b.gw.Endpoint, false, "us-east-1"
	cfg.Artifact.Store.Bucket = stacktest.Bucket(t)
	cfg.Artifact.Sidecar.Image = stacktest.Image(t)
	b.cfg = cfg
	db, err := pgxpool.New(context.Background(), b.dsn)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	b.db = db
	return b
}

// token adds a token with scopes to the servers started afterwards and
// returns it.
func (b *backend) token(name string, scopes ...string) string {
	secret := "secret-" + name + "-0123456789abcdef"
	sum := sha256.Sum256([]byte(secret))
	b.cfg.Auth.Tokens = append(b.cfg.Auth.Tokens, server.TokenConfig{Name: name, SHA256: hex.EncodeToString(sum[:]), Scopes: scopes})
	b.tokens[name] = secret
	return secret
}

// running is one real server.
type running struct {
	srv    *server.Server
	base   string // http://host:port
	stop   func()
	client *client.Client
}

// start runs a server on the backend; port 0 picks a free one. It stops
// when the test ends, or earlier through stop.
func (b *backend) start(t testing.TB, port int) *running {
	t.Helper()
	cfg := b.cfg
	cfg.API.Service.AppPort = port
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.Open(ctx, cfg, server.Secrets{SQLPassword: b.pg.Password, S3AccessKey: b.gw.AccessKey,
		S3SecretKey: b.gw.SecretKey}, server.Options{})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	stopped := false
	r := &running{srv: srv, base: "http://" + srv.APIAddr()}
	r.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		require.NoError(t, <-served)
		srv.Close()
	}
	t.Cleanup(r.stop)
	opts := []client.Option{}
	if tok, ok := b.tokens["all"]; ok {
		opts = append(opts, client.WithToken(tok))
	}
	r.client, err = client.New(r.base, opts...)
	require.NoError(t, err)
	return r
}

// sub is a raw websocket subscriber that checks the stream's invariants as
// it reads: hello first, seq contiguous from 1.
type sub struct {
	conn *websocket.Conn
	seq  int64
}

// dialOptions shape a subscriber's connection.
type dialOptions struct {
	query   url.Values
	token   string
	origin  string
	rcvBuf  int // the kernel receive buffer; 0 leaves the default
	noHello bool
}

func dial(ctx context.Context, base string, o dialOptions) (*websocket.Conn, *http.Response, error) {
	u := "ws" + strings.TrimPrefix(base, "http") + "/v1/events"
	if len(o.query) > 0 {
		u += "?" + o.query.Encode()
	}
	h := http.Header{}
	if o.token != "" {
		h.Set("Authorization", "Bearer "+o.token)
	}
	if o.origin != "" {
		h.Set("Origin", o.origin)
	}
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	if o.rcvBuf > 0 {
		nd := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) {
				serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, o.rcvBuf)
			})
			if err != nil {
				return err
			}
			return serr
		}}
		d.NetDialContext = nd.DialContext
	}
	return d.DialContext(ctx, u, h)
}

// subscribe connects and reads the hello frame.
func subscribe(t testing.TB, base string, o dialOptions) *sub {
	t.Helper()
	conn, resp, err := dial(context.Background(), base, o)
	require.NoError(t, err)
	resp.Body.Close()
	t.Cleanup(func() { _ = conn.Close() }) // the test is over either way
	s := &sub{conn: conn}
	if !o.noHello {
		s.hello(t)
	}
	return s
}

// hello reads the first frame: exactly type and server_time.
func (s *sub) hello(t testing.TB) {
	t.Helper()
	raw := s.raw(t)
	var shape map[string]any
	require.NoError(t, json.Unmarshal(raw, &shape))
	require.Equal(t, "hello", shape["type"], string(raw))
	require.Len(t, shape, 2, string(raw))
	at, err := time.Parse(time.RFC3339Nano, shape["server_time"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), at, time.Minute)
}

func (s *sub) raw(t testing.TB) []byte {
	t.Helper()
	require.NoError(t, s.conn.SetReadDeadline(time.Now().Add(frameWait)))
	kind, raw, err := s.conn.ReadMessage()
	require.NoError(t, err)
	require.Equal(t, websocket.TextMessage, kind)
	return raw
}

// next reads one frame, checking seq on change frames.
func (s *sub) next(t testing.TB) cairn.Event {
	t.Helper()
	raw := s.raw(t)
	var ev cairn.Event
	require.NoError(t, json.Unmarshal(raw, &ev), string(raw))
	if ev.IsChange() {
		s.seq++
		require.Equal(t, s.seq, ev.Seq, "seq is contiguous: %s", raw)
		require.False(t, ev.At.IsZero(), string(raw))
		require.NotEmpty(t, ev.ID, string(raw))
	} else {
		require.Zero(t, ev.Seq, "only change frames carry seq: %s", raw)
	}
	return ev
}

// until reads frames until one satisfies ok and returns it.
func (s *sub) until(t testing.TB, ok func(cairn.Event) bool) cairn.Event {
	t.Helper()
	for {
		if ev := s.next(t); ok(ev) {
			return ev
		}
	}
}

func is(typ cairn.EventType, id string) func(cairn.Event) bool {
	return func(ev cairn.Event) bool { return ev.Type == typ && ev.ID == id }
}

// live makes a change through r and waits until every subscriber has seen
// it, so each server's listener is known to be up. A listener that was not
// up yet sends resync once it is; then another change is made.
func live(t testing.TB, r *running, subs ...*sub) {
	t.Helper()
	for again := true; again; {
		again = false
		ws, err := r.client.CreateWorkspace(context.Background(), cairn.WorkspaceCreate{Name: "probe-" + strings.ToLower(ulid.Make().String())})
		require.NoError(t, err)
		for _, s := range subs {
			ev := s.until(t, func(ev cairn.Event) bool {
				return ev.Type == cairn.EventResync || is(cairn.EventWorkspaceUpserted, ws.ID)(ev)
			})
			again = again || ev.Type == cairn.EventResync
		}
	}
}
