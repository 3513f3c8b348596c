package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"syscall"

	"github.com/cairn-dev/cairn"
)

// requestIDHeader is the server's default request-ID header; the envelope
// carries the ID too, and wins.
const requestIDHeader = "X-Request-ID"

// errorFrom builds the *cairn.Error of a non-2xx answer.
func errorFrom(status int, header http.Header, body []byte) *cairn.Error {
	var env struct {
		RequestID string `json:"request_id"`
		Error     *struct {
			Message string `json:"message"`
			Detail  string `json:"detail"`
			Reason  string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error != nil {
		return &cairn.Error{
			Reason: cairn.Reason(env.Error.Reason), Detail: env.Error.Detail,
			Status: status, Message: env.Error.Message,
			RequestID: firstNonEmpty(env.RequestID, header.Get(requestIDHeader)),
		}
	}
	return &cairn.Error{
		Reason: plainReason(status), Detail: plainDetail(status, body),
		Status: status, Message: fmt.Sprintf("HTTP %d %s", status, http.StatusText(status)),
		RequestID: header.Get(requestIDHeader),
	}
}

// plainReason names the reason of an answer without an envelope where the
// status alone says it; otherwise the reason stays empty and Status tells.
func plainReason(status int) cairn.Reason {
	switch status {
	case http.StatusUnauthorized:
		return cairn.ReasonUnauthenticated
	case http.StatusForbidden:
		return cairn.ReasonForbidden
	case http.StatusRequestEntityTooLarge:
		return cairn.ReasonBodyTooLarge
	}
	return ""
}

// maxPlainDetail bounds the detail taken from a body that is not an
// envelope.
const maxPlainDetail = 200

// plainDetail is the first line of a plain-text body, printable and short;
// markup or nothing gives the status text.
func plainDetail(status int, body []byte) string {
	line, _, _ := bytes.Cut(bytes.TrimSpace(body), []byte("\n"))
	s := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, string(line))
	if s == "" || strings.HasPrefix(s, "<") {
		return strings.ToLower(http.StatusText(status))
	}
	if len(s) > maxPlainDetail {
		s = s[:maxPlainDetail] + "…"
	}
	return s
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// unreachableError is a request that got no HTTP answer: the server (or
// store) refused the connection, dropped it, or did not answer in time.
type unreachableError struct {
	what string // "GET /v1/workspaces", "the object store"
	err  error  // without the URL
}

func (e *unreachableError) Error() string { return e.what + ": unreachable: " + e.err.Error() }
func (e *unreachableError) Unwrap() error { return e.err }

// IsUnreachable reports whether err is (or wraps) a failure to get any
// answer: connection refused or reset, a name that does not resolve, a TLS
// handshake that failed, no answer within the request timeout. Errors the
// server answered are *cairn.Error instead; a cancelled context is neither.
func IsUnreachable(err error) bool {
	_, ok := errors.AsType[*unreachableError](err)
	return ok
}

// transportError classifies a failed round trip of what. The caller's own
// cancellation comes back as ctx.Err(); anything else is unreachable. The
// URL is dropped from the text: a presigned one is a credential.
func transportError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	return &unreachableError{what: what, err: redactURL(err)}
}

// retryable reports a connection failure after which an idempotent request
// may be sent again: the connection was refused, reset or closed before an
// answer. Timeouts are not retried: the wait was spent already.
func retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return false
	}
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return true
	}
	_, isOp := errors.AsType[*net.OpError](err)
	return isOp
}

// storeRefusal is the error of the object store's non-2xx answer to a
// presigned request (op "upload" or "download"), classified as the server
// classifies a sidecar's failure: a refused upload body is source_changed,
// a missing object object_missing, anything else store_unavailable. Only
// the store's error code is kept: its message may name keys. Status stays
// 0, since cairn did not answer.
func storeRefusal(op string, resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes)) // what arrived is enough to classify
	code := ""
	if m := s3Code.FindSubmatch(body); m != nil {
		code = " " + string(m[1])
	}
	detail := fmt.Sprintf("the object store refused the %s (HTTP %d%s)", op, resp.StatusCode, code)
	switch {
	case op == "upload" && resp.StatusCode == http.StatusBadRequest:
		return &cairn.Error{Reason: cairn.ReasonSourceChanged,
			Detail: detail + "; the file most likely changed while it was uploaded, so its bytes no longer match the checksum the upload was signed for"}
	case op == "download" && resp.StatusCode == http.StatusNotFound:
		return &cairn.Error{Reason: cairn.ReasonObjectMissing, Detail: detail + "; the artifact's object is gone"}
	case resp.StatusCode == http.StatusForbidden:
		return &cairn.Error{Reason: cairn.ReasonStoreUnavailable,
			Detail: detail + "; the presigned URL expired, or its signature does not match the request"}
	}
	return &cairn.Error{Reason: cairn.ReasonStoreUnavailable, Detail: detail}
}

// s3Code finds the error code of an S3 error document.
var s3Code = regexp.MustCompile(`<Code>([A-Za-z0-9.]{1,64})</Code>`)

// redactURL drops the URL from a request error: a presigned URL is a
// credential.
func redactURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}
