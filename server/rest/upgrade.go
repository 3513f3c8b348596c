package rest

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/server/envelope"
)

// Session is a session the service opened for a websocket route: its
// container exists, not started. Run serves it with serve — the
// protocol's Serve bound to the upgraded connection, bridging P (a
// shell's stream, an exec's process) under options O to its result R —
// and records its end; Abort tears it down when the upgrade failed.
type Session[P, O, R any] interface {
	Run(serve func(ctx context.Context, p P, opts O) R)
	Abort()
}

// Admitter answers the checks a websocket route starts with, before the
// handshake's own. Reasons: shell_disabled, server_shutting_down.
type Admitter interface {
	Admit() error
}

// handshake answers or upgrades one websocket request (a shell, an exec)
// and returns the status for the log; the session runs to its end inside
// it. id is the request's ID.
type handshake func(w http.ResponseWriter, r *http.Request, id string) int

// websocketRoute serves a handshake: the request ID set and carried in
// the context (the session's audit rows name it), one log line at its end.
func (a *API) websocketRoute(h handshake) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := envelope.RequestID(r.Header.Get(a.cfg.RequestIDHeader))
		w.Header().Set(a.cfg.RequestIDHeader, id)
		r = r.WithContext(cairn.WithRequestID(r.Context(), id))
		status := h(w, r, id)
		a.log.Log(r.Context(), a.cfg.LogLevel, "request", "method", r.Method, "path", r.URL.Path,
			"status", status, "request_id", id, "duration", time.Since(start))
	}
}

// upgradeRefusal is what the checks every websocket route starts with
// refuse, in their order: the service does not admit (disabled, shutting
// down), the request is not a websocket handshake, it does not offer sub.
// what names the route in the sentences ("the shell", "exec").
func upgradeRefusal(r *http.Request, admit func() error, what, sub string, offers func(*http.Request) bool) error {
	if err := admit(); err != nil {
		return err
	}
	if !websocket.IsWebSocketUpgrade(r) {
		return cairn.Errorf(cairn.ReasonWebsocketRequired, "%s is a websocket; send the Upgrade handshake", what)
	}
	if !offers(r) {
		return cairn.Errorf(cairn.ReasonSubprotocolRequired, "offer the subprotocol %s in Sec-WebSocket-Protocol", sub)
	}
	return nil
}

// upgrader upgrades with the subprotocol sub, no compression, the Origin
// rule — no Origin (the Go client sends none) or one listed in
// api.cors.allowedOrigins, never a blanket yes — and the envelope, by
// refuse, for a handshake gorilla refuses itself. The buffers bound what
// one read or write copies.
func upgrader(sub string, readBuffer, writeBuffer int, origins []string, refuse func(http.ResponseWriter, *http.Request, error) int) *websocket.Upgrader {
	return &websocket.Upgrader{
		HandshakeTimeout: ptyshell.HandshakeTimeout,
		ReadBufferSize:   readBuffer,
		WriteBufferSize:  writeBuffer,
		Subprotocols:     []string{sub},
		CheckOrigin: func(r *http.Request) bool {
			origin := r.Header.Get("Origin")
			return origin == "" || slices.ContainsFunc(origins, func(o string) bool { return strings.EqualFold(o, origin) })
		},
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			err := &cairn.Error{Reason: cairn.ReasonWebsocketRequired, Detail: "malformed websocket handshake: " + reason.Error()}
			switch status {
			case http.StatusForbidden:
				err = &cairn.Error{Reason: cairn.ReasonOriginNotAllowed, Detail: "Origin not allowed"}
			case http.StatusInternalServerError:
				err = cairn.Internal("the connection cannot be upgraded", reason)
			}
			refuse(w, r, err)
		},
	}
}

// serveUpgraded upgrades the connection of an opened session, the
// response naming the request's ID in h, and serves the session on it
// with serve to its end; a failed upgrade aborts the session (the
// upgrader has answered). It returns the status for the log.
func serveUpgraded[P, O, R any](w http.ResponseWriter, r *http.Request, up *websocket.Upgrader, h http.Header,
	sess Session[P, O, R], serve func(context.Context, *websocket.Conn, P, O) R) int {
	conn, err := up.Upgrade(envelope.Hijacker(w), r, h)
	if err != nil {
		sess.Abort()
		return http.StatusBadRequest
	}
	sess.Run(func(ctx context.Context, p P, opts O) R { return serve(ctx, conn, p, opts) })
	return http.StatusSwitchingProtocols
}

// refuseUpgrade answers a refused handshake with the envelope, titled
// title, and returns the status: a volume route's (volume_not_ready is 409
// there). A 5xx is logged as logMsg.
func (a *API) refuseUpgrade(w http.ResponseWriter, r *http.Request, id string, err error, title, logMsg string) int {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return cairn.StatusClientGone // nobody is left to read an answer
	}
	reason := cairn.ErrorReason(err)
	status, _ := reason.VolumeRouteStatus()
	if status >= http.StatusInternalServerError {
		a.log.ErrorContext(r.Context(), logMsg, "request_id", id, "reason", string(reason), "err", err)
	}
	envelope.WriteJSON(w, status, envelope.NewFailure(id, status, title, err))
	return status
}
