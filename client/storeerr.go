package client

import (
	"context"
	"errors"
	"net/url"
)

// StoreUnreachableError is a presigned PUT or GET (Upload, Replace,
// Download, DownloadTo, ReadHead) that got no answer from the object
// store: the presigned URL's host refused the connection, did not resolve,
// failed the TLS handshake or dropped the request. The server answered the
// presign, so the usual cause is a store endpoint the server can reach and
// this client cannot (artifact.s3.presignEndpoint). It matches
// IsUnreachable as well. Its text holds the host, never the URL's path or
// query: they name the object and carry the signature.
type StoreUnreachableError struct {
	// Host is the presigned URL's host, with its port when it has one.
	Host string
	err  error // an *unreachableError, without the URL
}

func (e *StoreUnreachableError) Error() string { return e.err.Error() }
func (e *StoreUnreachableError) Unwrap() error { return e.err }

// storeTransportError classifies a failed round trip to the presigned
// rawURL, what being "upload to" or "download from": the caller's own
// cancellation stays ctx's error, anything else is a
// *StoreUnreachableError naming the host.
func storeTransportError(ctx context.Context, what, rawURL string, err error) error {
	host := storeHost(rawURL)
	terr := transportError(ctx, what+" the object store at "+host, err)
	if _, ok := errors.AsType[*unreachableError](terr); !ok {
		return terr
	}
	return &StoreUnreachableError{Host: host, err: terr}
}

// storeHost is the host[:port] of a presigned URL, or a placeholder when
// it does not parse (the URL is never shown whole).
func storeHost(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "(unknown host)"
	}
	return u.Host
}
