package events

import (
	"cmp"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
)

// maxClientMessage bounds what a subscriber may send: it has nothing to
// say but control frames.
const maxClientMessage = 512

// sendBuffer bounds the kernel's send buffer of a subscriber's connection.
// Left to autotuning it grows past a megabyte on loopback, and a subscriber
// that stopped reading would be noticed only that much later.
const sendBuffer = 64 << 10

// ServeHTTP serves one subscriber of GET /v1/events[?workspace_id=ID]. The
// caller (server/auth) has checked the Origin, the Host and scope read. The
// subscriber joins the hub before its hello is sent, so a consumer that
// lists after hello misses nothing.
func (e *Events) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !websocket.IsWebSocketUpgrade(r) {
		e.refuse(w, r, "Expected a websocket upgrade", cairn.Errorf(cairn.ReasonInvalidParameters,
			"GET /v1/events is a websocket; send the Upgrade handshake"))
		return
	}
	q := r.URL.Query()
	feed, err := e.fileFeed(r, q)
	if err != nil {
		e.refuse(w, r, "Cannot watch the workspace's files", err)
		return
	}
	defer feed.Close()
	sub := e.hub.subscribe(q.Get("workspace_id"))
	if sub == nil {
		e.refuse(w, r, "Server shutting down", cairn.Errorf(cairn.ReasonNotReady, "the server is shutting down"))
		return
	}
	defer e.hub.done(sub)
	conn, err := e.upgrader.Upgrade(envelope.Hijacker(w), r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	if tcp, ok := conn.NetConn().(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(sendBuffer) // only a bound; the default works too
	}
	e.serve(conn, sub, feed)
}

// fileFeed subscribes to the files frames the request asks for with
// files=PATH (and workspace_id, and a cursor to resume from); a feed that
// never sends when it asks for none.
func (e *Events) fileFeed(r *http.Request, q url.Values) (FileFeed, error) {
	if !q.Has("files") {
		if q.Has("cursor") {
			return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "a cursor resumes the files frames: ask for them with files")
		}
		return noFiles{}, nil
	}
	ws := q.Get("workspace_id")
	switch {
	case ws == "":
		return nil, cairn.Errorf(cairn.ReasonInvalidParameters, "files frames are of one workspace: give workspace_id too")
	case e.cfg.Files == nil:
		return nil, cairn.Errorf(cairn.ReasonWatchUnavailable, "this server does not watch files")
	}
	return e.cfg.Files.WatchFiles(r.Context(), ws, cmp.Or(q.Get("files"), cairn.MountPath), q.Get("cursor"))
}

// noFiles is the feed of a subscriber that asked for no files frames.
type noFiles struct{}

func (noFiles) Frames() <-chan []byte   { return nil }
func (noFiles) Lagged() <-chan struct{} { return nil }
func (noFiles) Ended() <-chan struct{}  { return nil }
func (noFiles) Close()                  {}

// serve writes hello, then the subscriber's frames and pings, until the
// peer goes, the subscriber lags (resync, then close) or the server shuts
// down (close, going away).
func (e *Events) serve(conn *websocket.Conn, sub *subscriber, feed FileFeed) {
	gone := make(chan struct{})
	go e.read(conn, gone)
	defer func() {
		conn.Close() //nolint:errcheck // the connection is done either way
		<-gone
	}()
	ping := time.NewTicker(e.cfg.PingInterval)
	defer ping.Stop()

	hello, err := json.Marshal(cairn.Event{Type: cairn.EventHello, ServerTime: cairn.Timestamp(e.cfg.Now())})
	if err != nil || e.write(conn, hello) != nil {
		return
	}
	var seq int64
	for {
		select { // lagging comes first: its queue is stale
		case <-sub.lagged:
			e.lag(conn)
			return
		default:
		}
		select {
		case <-sub.lagged:
			e.lag(conn)
			return
		case <-sub.quit:
			e.closeWith(conn, websocket.CloseGoingAway, "server shutting down")
			return
		case <-gone:
			return
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(e.cfg.WriteTimeout)) != nil {
				return
			}
		case f := <-sub.queue:
			if f.change {
				seq++
			}
			if e.writeFrame(conn, f, seq) != nil {
				return
			}
		case body := <-feed.Frames():
			if e.write(conn, body) != nil {
				return
			}
		case <-feed.Lagged():
			e.lag(conn) // resync, then 1008: list the files again after reconnecting
			return
		case <-feed.Ended():
			e.closeWith(conn, websocket.CloseGoingAway, "the file watch ended; subscribe again")
			return
		}
	}
}

// read consumes what the peer sends (pongs, its close) and closes gone when
// the connection ends or the peer misses two pings.
func (e *Events) read(conn *websocket.Conn, gone chan<- struct{}) {
	defer close(gone)
	conn.SetReadLimit(maxClientMessage)
	wait := 2*e.cfg.PingInterval + e.cfg.WriteTimeout
	_ = conn.SetReadDeadline(time.Now().Add(wait)) // a failure shows as the next read's error
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(wait)) })
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
	}
}

// writeFrame writes f, a change frame numbered seq.
func (e *Events) writeFrame(conn *websocket.Conn, f *frame, seq int64) error {
	if !f.change {
		if f == resyncFrame {
			e.metrics.resyncs.Inc()
		}
		return e.write(conn, f.body)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(e.cfg.WriteTimeout)) // a failure shows as the write's error
	w, err := conn.NextWriter(websocket.TextMessage)
	if err != nil {
		return err
	}
	var head [32]byte
	_, err = w.Write(append(strconv.AppendInt(append(head[:0], `{"seq":`...), seq, 10), ','))
	if err == nil {
		_, err = w.Write(f.body[1:])
	}
	if err = errors.Join(err, w.Close()); err != nil {
		return err
	}
	e.metrics.sent.Inc()
	e.metrics.latency.Observe(time.Since(f.received).Seconds())
	return nil
}

func (e *Events) write(conn *websocket.Conn, msg []byte) error {
	_ = conn.SetWriteDeadline(time.Now().Add(e.cfg.WriteTimeout)) // a failure shows as the write's error
	return conn.WriteMessage(websocket.TextMessage, msg)
}

// lag sends resync to a subscriber that fell behind, then closes.
func (e *Events) lag(conn *websocket.Conn) {
	if e.write(conn, resyncFrame.body) != nil {
		return
	}
	e.metrics.resyncs.Inc()
	e.closeWith(conn, websocket.ClosePolicyViolation, "fell behind; list again")
}

func (e *Events) closeWith(conn *websocket.Conn, code int, text string) {
	msg := websocket.FormatCloseMessage(code, text)
	_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(e.cfg.WriteTimeout)) // closing anyway
}

// refuse answers before the upgrade with the REST error envelope.
func (e *Events) refuse(w http.ResponseWriter, r *http.Request, message string, err error) {
	id := envelope.RequestID(r.Header.Get(e.cfg.RequestIDHeader))
	w.Header().Set(e.cfg.RequestIDHeader, id)
	envelope.WriteRefusal(w, id, message, err)
}
