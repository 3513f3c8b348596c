package rest

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
)

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

// refuseUpgrade answers a refused handshake with the envelope, titled
// title, and returns the status; the shell's statuses come first
// (volume_not_ready is 409 there). A 5xx is logged as logMsg.
func (a *API) refuseUpgrade(w http.ResponseWriter, r *http.Request, id string, err error, title, logMsg string) int {
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		return cairn.StatusClientGone // nobody is left to read an answer
	}
	reason := cairn.ErrorReason(err)
	status, ok := shellStatuses[reason]
	if !ok {
		status, _ = reason.HTTPStatus()
	}
	if status >= http.StatusInternalServerError {
		a.log.ErrorContext(r.Context(), logMsg, "request_id", id, "reason", string(reason), "err", err)
	}
	envelope.WriteJSON(w, status, envelope.NewFailure(id, status, title, err))
	return status
}
