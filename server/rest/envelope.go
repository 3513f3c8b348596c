package rest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
)

// routeError carries the fixed sentence a route answers a failure with.
type routeError struct {
	message string
	err     error
}

func (e *routeError) Error() string { return e.message + ": " + e.err.Error() }
func (e *routeError) Unwrap() error { return e.err }

// failed attaches the route's failure message to err.
func failed(err error, format string, args ...any) error {
	return &routeError{message: fmt.Sprintf(format, args...), err: err}
}

// writeError answers err with its status and the envelope, logs internal
// causes (never sent), and returns the status for the access log. A client
// that hung up is no server failure: it is logged at debug as client_gone
// with 499, and nobody is left to read an answer.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, id string, err error) int {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		a.log.LogAttrs(r.Context(), slog.LevelDebug, "client gone", slog.String("request_id", id),
			slog.String("path", r.URL.Path), slog.String("reason", string(cairn.ReasonClientGone)))
		return cairn.StatusClientGone
	}
	reason := cairn.ErrorReason(err)
	status, known := reason.HTTPStatus()
	if s, ok := statusOverride(err); ok && known {
		status = s
	}
	message := "Request failed"
	if re, ok := errors.AsType[*routeError](err); ok {
		message = re.message
	}
	if !known {
		a.log.LogAttrs(r.Context(), slog.LevelError, "reason without a status", slog.String("request_id", id),
			slog.String("reason", string(reason)))
	}
	if status >= http.StatusInternalServerError {
		a.log.LogAttrs(r.Context(), slog.LevelError, "request failed", slog.String("request_id", id),
			slog.String("path", r.URL.Path), slog.String("reason", string(reason)), slog.Any("err", err))
	}
	envelope.WriteFailure(w, id, status, message, err)
	return status
}
