package sidecar

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// Failure reasons of the store transfers.
const (
	ReasonSourceChanged    = "source_changed"
	ReasonObjectNotFound   = "object_not_found"
	ReasonStoreRejected    = "store_rejected"
	ReasonStoreError       = "store_error"
	ReasonStoreUnreachable = "store_unreachable"
)

// chunk is the streaming unit of reads and transfers.
const chunk = 1 << 20

// connectTimeout bounds reaching the store; the transfer itself may take up
// to the container's timeout.
const connectTimeout = 30 * time.Second

func httpClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: connectTimeout}).DialContext,
		TLSHandshakeTimeout:   connectTimeout,
		ResponseHeaderTimeout: 5 * time.Minute,
	}}
}

// unreachable describes a network failure by its kind only: the HTTP
// library's error text embeds the URL, which must never be printed.
func unreachable(direction string, err error) *failure {
	return fail(ReasonStoreUnreachable, "the object store could not be reached for the %s: %s", direction, networkKind(err))
}

func networkKind(err error) string {
	var dnsErr *net.DNSError
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return "host unreachable"
	case errors.As(err, &dnsErr):
		return "DNS lookup failed"
	case errors.As(err, &tlsErr), errors.As(err, &certErr):
		return "TLS handshake failed"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	default:
		return "network error"
	}
}

// statusFailure classifies a non-2xx answer of the store.
func statusFailure(status int, direction string) *failure {
	switch {
	case status == http.StatusNotFound && direction == "download":
		return fail(ReasonObjectNotFound, "the object store returned HTTP %d for the download", status)
	case status >= 500:
		return fail(ReasonStoreError, "the object store returned HTTP %d for the %s", status, direction)
	case direction == "upload":
		return fail(ReasonStoreRejected, "the object store rejected the upload (HTTP %d)", status)
	default:
		return fail(ReasonStoreRejected, "the object store returned HTTP %d for the download", status)
	}
}

func failed(f *failure, status int) Result {
	r := Failure(f.reason, f.message)
	if status != 0 {
		r.HTTPStatus = &status
	}
	return r
}

// requireEnv reads the named variables, failing on the first one missing.
func requireEnv(env Env, names ...string) (map[string]string, *failure) {
	vals := make(map[string]string, len(names))
	for _, n := range names {
		v := env(n)
		if v == "" {
			return nil, fail(ReasonEnvInvalid, "%s is not set", n)
		}
		vals[n] = v
	}
	return vals, nil
}

// errno returns the OS error behind err for messages, without a path.
func errno(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return describe(err).Error()
}
