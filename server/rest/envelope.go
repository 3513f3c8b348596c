package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/cairn-dev/cairn"
)

// maxRequestIDLength bounds an accepted client request ID.
const maxRequestIDLength = 128

// requestID returns the client's request ID when it is 1–128 printable
// ASCII characters, else a fresh UUIDv4: an unchecked value would let a
// client inject control characters into our logs.
func requestID(given string) string {
	if given == "" || len(given) > maxRequestIDLength {
		return uuid.NewString()
	}
	for i := 0; i < len(given); i++ {
		if given[i] < 0x20 || given[i] > 0x7e {
			return uuid.NewString()
		}
	}
	return given
}

// writeSuccess writes the envelope with the payload's fields merged at the
// top level. A nil payload gives the bare envelope.
func writeSuccess(w http.ResponseWriter, id string, payload any) {
	idJSON, _ := json.Marshal(id)
	var buf bytes.Buffer
	buf.WriteString(`{"success":true,"request_id":`)
	buf.Write(idJSON)
	if payload != nil {
		body, err := json.Marshal(payload)
		if err != nil {
			writeJSON(w, http.StatusInternalServerError, failure(id, http.StatusInternalServerError,
				"Failed to encode response", &cairn.Error{Reason: cairn.ReasonInternal, Detail: "internal error"}))
			return
		}
		if body = bytes.TrimSpace(body); len(body) > 2 {
			buf.WriteByte(',')
			buf.Write(body[1 : len(body)-1])
		}
	}
	buf.WriteString("}\n")
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes()) //nolint:errcheck // the client went away
}

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

type errorBody struct {
	Success   bool      `json:"success"`
	RequestID string    `json:"request_id"`
	Error     errorInfo `json:"error"`
}

type errorInfo struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Reason  string `json:"reason"`
}

func failure(id string, status int, message string, err error) errorBody {
	return errorBody{RequestID: id, Error: errorInfo{
		Code: status, Message: message, Detail: cairn.ErrorDetail(err), Reason: string(cairn.ErrorReason(err)),
	}}
}

// writeError answers err with its status and the envelope, logs internal
// causes (never sent), and returns the status for the access log. A client
// that hung up is no server failure: it is logged at debug as client_gone
// with 499, and nobody is left to read an answer.
func (a *API) writeError(w http.ResponseWriter, r *http.Request, id string, err error) int {
	if r.Context().Err() != nil && errors.Is(err, context.Canceled) {
		a.log.LogAttrs(r.Context(), slog.LevelDebug, "client gone", slog.String("request_id", id),
			slog.String("path", r.URL.Path), slog.String("reason", string(cairn.ReasonClientGone)))
		return statusClientGone
	}
	reason := cairn.ErrorReason(err)
	status, known := statusOf(reason)
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
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
	}
	writeJSON(w, status, failure(id, status, message, err))
	return status
}

// statusClientGone is what the access log shows for a client that hung up.
const statusClientGone = 499

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}

// statuses is the one table from reason to HTTP status (API.md §1.5).
var statuses = map[cairn.Reason]int{
	cairn.ReasonInvalidJSON:       http.StatusBadRequest,
	cairn.ReasonInvalidParameters: http.StatusBadRequest,
	cairn.ReasonInvalidQuery:      http.StatusBadRequest,
	cairn.ReasonInvalidName:       http.StatusBadRequest,
	cairn.ReasonListTooLarge:      http.StatusBadRequest,
	cairn.ReasonInvalidChecksum:   http.StatusBadRequest,
	cairn.ReasonObjectTooLarge:    http.StatusBadRequest,
	cairn.ReasonStagingKeyInvalid: http.StatusBadRequest,
	cairn.ReasonStagingNotFound:   http.StatusBadRequest,
	cairn.ReasonUploadIncomplete:  http.StatusBadRequest,
	cairn.ReasonChecksumMismatch:  http.StatusBadRequest,
	cairn.ReasonStagingKeyUsed:    http.StatusConflict,
	cairn.ReasonInvalidPath:       http.StatusBadRequest,
	cairn.ReasonPathOutsideMount:  http.StatusBadRequest,
	cairn.ReasonPathIsMountRoot:   http.StatusBadRequest,
	cairn.ReasonVolumeNotReady:    http.StatusBadRequest,
	cairn.ReasonSourceNotFound:    http.StatusBadRequest,
	cairn.ReasonSourceIsDirectory: http.StatusBadRequest,
	cairn.ReasonSourceNotRegular:  http.StatusBadRequest,
	cairn.ReasonSourceUnreadable:  http.StatusBadRequest,
	cairn.ReasonSourceChanged:     http.StatusBadRequest,
	cairn.ReasonTargetDirMissing:  http.StatusBadRequest,
	cairn.ReasonTargetIsDirectory: http.StatusBadRequest,
	cairn.ReasonWriteFailed:       http.StatusBadRequest,
	cairn.ReasonSidecarRejected:   http.StatusBadRequest,

	// The files routes and archives (ARCHITECTURE §11.1, §11.2).
	cairn.ReasonPathIsDirectory:   http.StatusBadRequest,
	cairn.ReasonPathIsSymlink:     http.StatusBadRequest,
	cairn.ReasonPathNotRegular:    http.StatusBadRequest,
	cairn.ReasonPathUnreadable:    http.StatusBadRequest,
	cairn.ReasonRangeTooLarge:     http.StatusBadRequest,
	cairn.ReasonSourceNotDir:      http.StatusBadRequest,
	cairn.ReasonArchiveInvalid:    http.StatusBadRequest,
	cairn.ReasonArchiveUnsafePath: http.StatusBadRequest,
	cairn.ReasonArchiveTooLarge:   http.StatusBadRequest,
	cairn.ReasonArchiveRatio:      http.StatusBadRequest,
	cairn.ReasonPathNotFound:      http.StatusNotFound,
	cairn.ReasonTargetExists:      http.StatusConflict,

	// The shell's pre-upgrade refusals (PTYSHELL.md §3.2).
	cairn.ReasonWebsocketRequired:   http.StatusBadRequest,
	cairn.ReasonSubprotocolRequired: http.StatusBadRequest,
	cairn.ReasonInvalidTerminal:     http.StatusBadRequest,
	cairn.ReasonShellDisabled:       http.StatusNotFound,
	cairn.ReasonVolumeMissing:       http.StatusConflict,
	cairn.ReasonTooManyShells:       http.StatusTooManyRequests,
	cairn.ReasonServerShuttingDown:  http.StatusServiceUnavailable,
	cairn.ReasonShellImageMissing:   http.StatusServiceUnavailable,

	cairn.ReasonUnauthenticated:  http.StatusUnauthorized,
	cairn.ReasonForbidden:        http.StatusForbidden,
	cairn.ReasonOriginNotAllowed: http.StatusForbidden,
	cairn.ReasonHostNotAllowed:   http.StatusForbidden,

	cairn.ReasonWorkspaceNotFound: http.StatusNotFound,
	cairn.ReasonArtifactNotFound:  http.StatusNotFound,
	cairn.ReasonShellNotFound:     http.StatusNotFound,

	cairn.ReasonNameTaken:     http.StatusConflict,
	cairn.ReasonVolumeExists:  http.StatusConflict,
	cairn.ReasonVolumeInUse:   http.StatusConflict,
	cairn.ReasonObjectMissing: http.StatusConflict,

	cairn.ReasonBodyTooLarge: http.StatusRequestEntityTooLarge,

	cairn.ReasonInternal:         http.StatusInternalServerError,
	cairn.ReasonNotReady:         http.StatusInternalServerError,
	cairn.ReasonSidecarFailed:    http.StatusInternalServerError,
	cairn.ReasonVolumePrepFailed: http.StatusInternalServerError,

	cairn.ReasonStoreUnavailable: http.StatusBadGateway,

	cairn.ReasonDockerUnavailable:   http.StatusServiceUnavailable,
	cairn.ReasonDatabaseUnavailable: http.StatusServiceUnavailable,
	cairn.ReasonWorkspaceBusy:       http.StatusServiceUnavailable,
	cairn.ReasonSidecarBusy:         http.StatusServiceUnavailable,
	cairn.ReasonSweepBusy:           http.StatusServiceUnavailable,

	cairn.ReasonSidecarTimeout: http.StatusGatewayTimeout,

	cairn.ReasonClientGone: statusClientGone,
}

// statusOf looks a reason up; one missing from the table is a bug, answered
// 500 (known false) rather than passed off as the caller's mistake.
func statusOf(r cairn.Reason) (status int, known bool) {
	status, known = statuses[r]
	if !known {
		return http.StatusInternalServerError, false
	}
	return status, true
}

// RequestID applies the request-ID rule of API.md §1.3 to a client's header
// value: the value itself when acceptable, else a fresh UUIDv4. Decorators
// that answer before the router (server/auth) use it.
func RequestID(given string) string { return requestID(given) }

// WriteRefusal answers a request refused before routing (the guards and
// authentication of server/auth) with the status of err's reason, the error
// envelope carrying id and message, and WWW-Authenticate on a 401. The
// caller sets the request-ID response header.
func WriteRefusal(w http.ResponseWriter, id, message string, err error) {
	status, _ := statusOf(cairn.ErrorReason(err))
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
	}
	writeJSON(w, status, failure(id, status, message, err))
}
