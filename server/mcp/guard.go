package mcp

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/google/uuid"

	"github.com/cairn-dev/cairn"
)

// GuardHost protects next against DNS rebinding (API.md §1.7). A request
// that arrived on a loopback local address (127.0.0.0/8 or ::1, read from
// http.LocalAddrContextKey) must carry a Host header that, port stripped, is
// "localhost", a "*.localhost" name or a loopback IP literal; otherwise it is
// refused with 403, reason host_not_allowed, in the REST error envelope. The
// key is the connection's local address, not the configured listen address,
// so a same-host reverse proxy dialling 127.0.0.1 must forward a loopback
// Host. Requests on other local addresses pass untouched.
//
// The refusal's request ID is the client's requestIDHeader value when that
// is 1–128 printable ASCII characters, else a fresh UUIDv4; it is echoed in
// the same header.
func GuardHost(next http.Handler, requestIDHeader string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if onLoopback(r) && !loopbackHost(r.Host) {
			refuseHost(w, r, requestIDHeader)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// onLoopback reports whether the request came in on a loopback address.
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// loopbackHost reports whether a Host header names this machine only.
func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// refuseHost writes the 403 envelope. The message keeps the first cairn
// server's text, with the Host header as received.
func refuseHost(w http.ResponseWriter, r *http.Request, requestIDHeader string) {
	id := requestID(r.Header.Get(requestIDHeader))
	type errorInfo struct {
		Code    int          `json:"code"`
		Message string       `json:"message"`
		Reason  cairn.Reason `json:"reason"`
	}
	body := struct {
		Success   bool      `json:"success"`
		RequestID string    `json:"request_id"`
		Error     errorInfo `json:"error"`
	}{RequestID: id, Error: errorInfo{
		Code:    http.StatusForbidden,
		Message: fmt.Sprintf("Forbidden: invalid Host header %q", r.Host),
		Reason:  cairn.ReasonHostNotAllowed,
	}}
	w.Header().Set(requestIDHeader, id)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	json.NewEncoder(w).Encode(body) //nolint:errcheck // the client went away
}

// requestID returns the client's value when it is 1–128 printable ASCII
// characters, else a fresh UUIDv4, as the REST front door does: an
// unchecked value would let a client put control characters in our logs.
func requestID(given string) string {
	if given == "" || len(given) > 128 {
		return uuid.NewString()
	}
	for i := 0; i < len(given); i++ {
		if given[i] < 0x20 || given[i] > 0x7e {
			return uuid.NewString()
		}
	}
	return given
}
