package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

var _ cairn.EventService = (*Client)(nil)

// Limits of one events connection.
const (
	// eventsIdle is how long a connection may stay silent (no frame, no
	// ping) before it is taken for dead: the server pings every 20 s.
	eventsIdle = 60 * time.Second
	// maxEventFrame bounds one frame read; an artifact frame with a 4 KiB
	// description is under 8 KiB.
	maxEventFrame = 1 << 20
	// eventsQueue is how many frames are read ahead of Next. When it is
	// full the connection stops reading and the server, seeing the stream
	// fall behind, sends resync and closes.
	eventsQueue = 256
	// eventsHandshake bounds one dial.
	eventsHandshake = 30 * time.Second
)

// ErrStreamClosed is returned by Next after Close, or once the context
// given to Events is done.
var ErrStreamClosed = errors.New("events: stream closed")

// Events subscribes to the live events stream, filtered to one workspace
// and its artifacts when f.WorkspaceID is set. It returns at once; the
// first dial happens in the first Next. The stream ends when ctx is done or
// Close is called. See cairn.EventStream for what Next returns across lost
// connections: a *cairn.DisconnectedError once per loss, then, on the next
// successful dial, the server's hello and a resync frame. A 401 or 403 is a
// *cairn.Error returned by every later call.
func (c *Client) Events(ctx context.Context, f cairn.EventFilter) (cairn.EventStream, error) {
	q := url.Values{}
	if f.WorkspaceID != "" {
		q.Set("workspace_id", f.WorkspaceID)
	}
	if f.Files != "" {
		q.Set("files", f.Files)
	}
	s := &stream{
		url:    func(q url.Values) string { return c.websocketURL("/v1/events", q) },
		query:  q,
		cursor: f.Cursor,
		header: c.header(),
		dialer: &websocket.Dialer{
			Proxy:            http.ProxyFromEnvironment,
			TLSClientConfig:  c.tlsConfig(),
			HandshakeTimeout: eventsHandshake,
		},
		redial: termkit.Redial(),
		closed: make(chan struct{}),
		ended:  ctx.Done(),
	}
	s.stop = context.AfterFunc(ctx, func() { _ = s.Close() }) // Close reports nothing
	return s, nil
}

// stream is one subscription; Next is called from one goroutine at a
// time, Close from any.
type stream struct {
	url    func(url.Values) string
	query  url.Values
	header http.Header
	dialer *websocket.Dialer
	stop   func() bool
	ended  <-chan struct{} // the Events context's Done: the stream ends with it

	// Owned by Next.
	conn    *link                       // the current connection; nil between connections
	redial  *backoff.ExponentialBackOff // termkit.Redial, reset by a hello
	retryAt time.Time                   // when the next dial may happen
	lost    bool                        // a disconnect was reported since the last hello
	resync  bool                        // a resync frame is due after the hello just returned
	fatal   error                       // 401, 403: returned by every call
	cursor  string                      // the last files frame's: a redial resumes from it

	mu        sync.Mutex // guards current and closed's closing
	current   *link
	closeOnce sync.Once
	closed    chan struct{}
}

// link is one websocket connection and its reader.
type link struct {
	ws    *websocket.Conn
	items chan item // frames in arrival order, then the reason the reader stopped
	once  sync.Once
	done  chan struct{}
}

// item is a frame or, last, the error that ended the connection.
type item struct {
	raw []byte
	err error
}

// Next returns the next frame; see cairn.EventStream.
func (s *stream) Next(ctx context.Context) (cairn.Event, error) {
	switch {
	case s.fatal != nil:
		return cairn.Event{}, s.fatal
	case s.isClosed():
		return cairn.Event{}, ErrStreamClosed
	case s.resync:
		s.resync = false
		return cairn.Event{Type: cairn.EventResync}, nil
	}
	if s.conn == nil {
		if err := s.connect(ctx); err != nil {
			return cairn.Event{}, err
		}
	}
	select {
	case <-ctx.Done():
		return cairn.Event{}, ctx.Err()
	case <-s.closed:
		return cairn.Event{}, ErrStreamClosed
	case <-s.ended:
		return cairn.Event{}, ErrStreamClosed
	case it := <-s.conn.items:
		if it.err != nil {
			return cairn.Event{}, s.disconnect(it.err)
		}
		var ev cairn.Event
		if err := json.Unmarshal(it.raw, &ev); err != nil {
			return cairn.Event{}, s.disconnect(fmt.Errorf("events: undecodable frame: %w", err))
		}
		if ev.Cursor != "" {
			s.cursor = ev.Cursor
		}
		if ev.Type == cairn.EventHello {
			s.redial.Reset()
			s.resync, s.lost = s.lost, false
		}
		return ev, nil
	}
}

// connect waits out the backoff and dials. A failed dial is reported as
// a *cairn.DisconnectedError, a refused token as the fatal *cairn.Error.
func (s *stream) connect(ctx context.Context) error {
	if d := time.Until(s.retryAt); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closed:
			return ErrStreamClosed
		case <-s.ended:
			return ErrStreamClosed
		case <-t.C:
		}
	}
	q := url.Values{}
	for k, v := range s.query {
		q[k] = v
	}
	if s.cursor != "" {
		q.Set("cursor", s.cursor)
	}
	ws, resp, err := s.dialer.DialContext(ctx, s.url(q), s.header)
	if resp != nil && resp.Body != nil {
		if err != nil {
			err = decodeError(resp)
		}
		resp.Body.Close() //nolint:errcheck // read what was needed
	}
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return ctx.Err()
	case resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden):
		s.fatal = err
		return err
	case resp != nil:
		return s.disconnect(err)
	default:
		return s.disconnect(transportError(ctx, "GET /v1/events", err))
	}
	l := &link{ws: ws, items: make(chan item, eventsQueue), done: make(chan struct{})}
	s.mu.Lock()
	if s.isClosed() {
		s.mu.Unlock()
		ws.Close() //nolint:errcheck // never used
		return ErrStreamClosed
	}
	s.current = l
	s.mu.Unlock()
	s.conn = l
	go l.read()
	return nil
}

// disconnect drops the current connection, if any, schedules the next dial
// on termkit.Redial's schedule (250 ms doubling to 30 s, ±20 %, started
// over by a hello) and returns the error Next reports once.
func (s *stream) disconnect(err error) error {
	if s.conn != nil {
		s.conn.close()
		s.mu.Lock()
		s.current = nil
		s.mu.Unlock()
		s.conn = nil
	}
	retryIn := s.redial.NextBackOff()
	s.retryAt = time.Now().Add(retryIn)
	s.lost = true
	return &cairn.DisconnectedError{RetryIn: retryIn, Err: err}
}

// Close ends the subscription and unblocks Next. It is idempotent.
func (s *stream) Close() error {
	s.closeOnce.Do(func() {
		s.stop()
		s.mu.Lock()
		close(s.closed)
		if s.current != nil {
			s.current.close()
		}
		s.mu.Unlock()
	})
	return nil
}

func (s *stream) isClosed() bool {
	select {
	case <-s.closed:
		return true
	case <-s.ended:
		return true
	default:
		return false
	}
}

// read queues the connection's frames until it ends. Pings are answered
// and keep it alive; eventsIdle of silence ends it.
func (l *link) read() {
	l.ws.SetReadLimit(maxEventFrame)
	alive := func() { _ = l.ws.SetReadDeadline(time.Now().Add(eventsIdle)) } // a failure shows as the next read's error
	alive()
	l.ws.SetPingHandler(func(data string) error {
		alive()
		err := l.ws.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(10*time.Second))
		if errors.Is(err, websocket.ErrCloseSent) {
			return nil
		}
		return err
	})
	for {
		kind, raw, err := l.ws.ReadMessage()
		var it item
		switch {
		case err != nil:
			it.err = fmt.Errorf("events: connection lost: %w", err)
		case kind != websocket.TextMessage:
			continue
		default:
			alive()
			it.raw = raw
		}
		select {
		case l.items <- it:
		case <-l.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// close ends the connection; the reader stops. Safe to call twice.
func (l *link) close() {
	l.once.Do(func() {
		close(l.done)
		l.ws.Close() //nolint:errcheck // ending it either way
	})
}
