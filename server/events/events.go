// Package events is the live events stream: one LISTEN connection per
// server on channel cairn_events, each notification's row loaded once and
// fanned out through a hub to the websocket subscribers of GET /v1/events.
//
// Nothing on the way waits for a subscriber: the LISTEN loop only queues,
// one loader loads and publishes, and each subscriber has a bounded queue;
// one that falls behind is sent resync and closed. After the LISTEN
// connection is lost and regained, every subscriber is sent resync.
package events

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/cairn-dev/cairn/server/service"
	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgxlisten"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// Store loads the current rows that notifications name (server/postgres).
type Store = service.RowLoader

// Defaults of Config.
const (
	DefaultQueueLen       = 4096
	DefaultPingInterval   = 20 * time.Second
	DefaultWriteTimeout   = 10 * time.Second
	DefaultReconnectDelay = time.Second
	DefaultLoadTimeout    = 10 * time.Second
	DefaultBatchSize      = 500
	DefaultMaxPending     = 1 << 16
)

// Config configures the stream. Store, Connect and Registerer are
// required; zero durations and sizes take the defaults above.
type Config struct {
	Store Store
	// Connect opens the dedicated LISTEN connection; the listener closes it.
	Connect    func(ctx context.Context) (*pgx.Conn, error)
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Channels are more channels the LISTEN connection serves, each with
	// the receiver of its payloads; they see no resync.
	Channels map[string]func(payload string)
	// RequestIDHeader names the request-ID header of refusals before the
	// upgrade; default "X-Request-ID".
	RequestIDHeader string

	// QueueLen bounds each subscriber's queue of frames not yet written.
	QueueLen int
	// PingInterval is how often subscribers are pinged; a subscriber that
	// answers none of two pings is dropped.
	PingInterval time.Duration
	// WriteTimeout bounds the write of one frame.
	WriteTimeout time.Duration
	// ReconnectDelay is the wait before the LISTEN connection is dialled
	// again after it was lost or could not be made.
	ReconnectDelay time.Duration
	// LoadTimeout bounds the loading of one batch of rows.
	LoadTimeout time.Duration
	// BatchSize is the most notifications whose rows one query loads.
	BatchSize int
	// MaxPending bounds the notifications waiting for the loader; past it
	// they are dropped and subscribers resync.
	MaxPending int
	// Now is the clock of "at" and "server_time"; default time.Now.
	Now func() time.Time
	// Files feeds the files frames of a subscriber that asks for a
	// workspace's files; nil refuses such a subscriber (watch_unavailable).
	Files FileWatcher
}

// FileWatcher subscribes to the file changes of a workspace's volume under
// a path, from a cursor (service.Service.WatchFiles).
type FileWatcher interface {
	WatchFiles(ctx context.Context, workspaceID, path, cursor string) (FileFeed, error)
}

// FileFeed is one subscriber's files frames, encoded. Lagged is closed
// once it fell behind, its last frame a resync; Ended once the watch
// ended. Close lets go of it.
type FileFeed interface {
	Frames() <-chan []byte
	Lagged() <-chan struct{}
	Ended() <-chan struct{}
	Close()
}

// Events is one server's events stream: Run listens, ServeHTTP serves
// subscribers.
type Events struct {
	cfg      Config
	log      *slog.Logger
	metrics  *metrics
	hub      *hub
	inbox    *inbox
	upgrader websocket.Upgrader
}

// New checks cfg and registers the stream's metrics.
func New(cfg Config) (*Events, error) {
	if cfg.Store == nil || cfg.Connect == nil || cfg.Registerer == nil {
		return nil, errors.New("events: Store, Connect and Registerer are required")
	}
	cfg.RequestIDHeader = cmp.Or(cfg.RequestIDHeader, "X-Request-ID")
	cfg.QueueLen = cmp.Or(cfg.QueueLen, DefaultQueueLen)
	cfg.PingInterval = cmp.Or(cfg.PingInterval, DefaultPingInterval)
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, DefaultWriteTimeout)
	cfg.ReconnectDelay = cmp.Or(cfg.ReconnectDelay, DefaultReconnectDelay)
	cfg.LoadTimeout = cmp.Or(cfg.LoadTimeout, DefaultLoadTimeout)
	cfg.BatchSize = cmp.Or(cfg.BatchSize, DefaultBatchSize)
	cfg.MaxPending = cmp.Or(cfg.MaxPending, DefaultMaxPending)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("events: register metrics: %w", err)
	}
	return &Events{
		cfg:     cfg,
		log:     cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		metrics: m,
		hub:     newHub(cfg.QueueLen, m),
		inbox:   newInbox(cfg.MaxPending),
		upgrader: websocket.Upgrader{
			HandshakeTimeout: 10 * time.Second,
			ReadBufferSize:   1024,
			WriteBufferSize:  16 << 10,
			// server/auth has already refused any Origin not allow-listed;
			// gorilla's same-host default would refuse the allow-listed ones.
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}, nil
}

// Run listens for notifications and publishes them until ctx is done, then
// closes every subscriber (going away) and returns nil once their
// connections are over. The LISTEN connection is dialled again after every
// loss, ReconnectDelay apart.
func (e *Events) Run(ctx context.Context) error {
	defer e.hub.close()
	l := &pgxlisten.Listener{
		Connect:        e.cfg.Connect,
		LogError:       e.logListenError,
		ReconnectDelay: e.cfg.ReconnectDelay,
	}
	l.Handle(channel, e)
	for name, receive := range e.cfg.Channels {
		l.Handle(name, pgxlisten.HandlerFunc(func(_ context.Context, n *pgconn.Notification, _ *pgx.Conn) error {
			receive(n.Payload)
			return nil
		}))
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := l.Listen(gctx)
		if gctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("events: listen: %w", err)
	})
	g.Go(func() error {
		e.load(gctx)
		return nil
	})
	return g.Wait()
}
