// Package envelope is the JSON envelope every HTTP answer of cairn's API
// carries — `{"success":…,"request_id":…}` with the payload or an error —
// and the request-ID rule. The REST front door, the guards of server/auth and
// the websocket routes answer through it, so a refusal looks the same
// whichever of them gives it.
package envelope

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/google/uuid"

	"github.com/cairn-dev/cairn"
)

// MaxRequestIDLength bounds an accepted client request ID.
const MaxRequestIDLength = 128

// RequestID returns the client's request ID when it is 1–128 printable ASCII
// characters, else a fresh UUIDv4: an unchecked value would let a client
// inject control characters into our logs.
func RequestID(given string) string {
	if given == "" || len(given) > MaxRequestIDLength {
		return uuid.NewString()
	}
	for i := 0; i < len(given); i++ {
		if given[i] < 0x20 || given[i] > 0x7e {
			return uuid.NewString()
		}
	}
	return given
}

// Failure is the error envelope.
type Failure struct {
	Success   bool      `json:"success"`
	RequestID string    `json:"request_id"`
	Error     ErrorInfo `json:"error"`
}

// ErrorInfo is the error envelope's "error" object: the HTTP status again,
// the route's fixed sentence, the client-safe detail and the stable reason.
type ErrorInfo struct {
	Code    int    `json:"code"`
	Message string `json:"message,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Reason  string `json:"reason"`
}

// NewFailure builds the error envelope of err answered with status.
func NewFailure(id string, status int, message string, err error) Failure {
	return Failure{RequestID: id, Error: ErrorInfo{
		Code: status, Message: message, Detail: cairn.ErrorDetail(err), Reason: string(cairn.ErrorReason(err)),
	}}
}

// WriteSuccess writes the success envelope with the payload's fields merged
// at the top level. A nil payload gives the bare envelope.
func WriteSuccess(w http.ResponseWriter, id string, payload any) {
	idJSON, _ := json.Marshal(id)
	var buf bytes.Buffer
	buf.WriteString(`{"success":true,"request_id":`)
	buf.Write(idJSON)
	if payload != nil {
		body, err := json.Marshal(payload)
		if err != nil {
			WriteJSON(w, http.StatusInternalServerError, NewFailure(id, http.StatusInternalServerError,
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

// WriteFailure answers err with status and the error envelope, with the
// WWW-Authenticate challenge on a 401. The caller sets the request-ID
// response header.
func WriteFailure(w http.ResponseWriter, id string, status int, message string, err error) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="cairn"`)
	}
	WriteJSON(w, status, NewFailure(id, status, message, err))
}

// WriteRefusal answers a request refused before routing (the guards and
// authentication of server/auth, the events websocket's handshake) with the
// status of err's reason.
func WriteRefusal(w http.ResponseWriter, id, message string, err error) {
	status, _ := cairn.ErrorReason(err).HTTPStatus()
	WriteFailure(w, id, status, message, err)
}

// WriteJSON writes v as the JSON body of an answer with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away
}

// Hijacker finds the http.Hijacker under decorators that wrap the
// ResponseWriter (the HTTP metrics recorder offers only Unwrap): a
// websocket route answers 101 by taking the connection over, and gorilla's
// upgrader asks the writer it is given.
func Hijacker(w http.ResponseWriter) http.ResponseWriter {
	for {
		if _, ok := w.(http.Hijacker); ok {
			return w
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return w
		}
		w = u.Unwrap()
	}
}
