// Package client is the Go client of a cairn server's REST API. *Client
// implements the cairn service interfaces (workspaces, artifacts, volume
// transfers, maintenance, audit), so code written against them runs
// in-process or remote unchanged, and adds the local-file transfers a
// server never proxies: Upload, Replace, Download and ReadHead.
//
// Every failure the server answers is a *cairn.Error carrying the HTTP
// status, the stable reason, the route's message and the request ID. A
// server that could not be reached is told apart by IsUnreachable. Only
// idempotent requests are retried, and only after a connection failure.
// The client never logs; it never puts the token in a URL.
package client

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/go-resty/resty/v2"

	"github.com/cairn-dev/cairn/internal/termkit"
)

// Defaults of a new Client.
const (
	// DefaultTimeout bounds one metadata request.
	DefaultTimeout = 60 * time.Second
	// LongTimeout bounds a request that runs sidecars or a sweep on the
	// server (volume transfers and setup, maintenance): the server allows
	// two sidecar runs of 300 s plus slack.
	LongTimeout = 11 * time.Minute
	// DefaultUserAgent is sent unless WithUserAgent says otherwise.
	DefaultUserAgent = "cairn-go-client"
)

// retries is how many times an idempotent request is sent again after a
// connection failure; the waits between are termkit.Retry's.
const retries = 3

// maxResponseBytes bounds a REST answer read into memory: a page of 1 000
// artifacts with 4 KiB descriptions is about 5 MB.
const maxResponseBytes = 16 << 20

// Client talks to one cairn server. It is safe for concurrent use.
type Client struct {
	base      *url.URL // scheme://host[:port][/prefix], no trailing slash
	token     string
	userAgent string
	timeout   time.Duration
	caPool    *x509.CertPool // nil: the system roots
	http      *http.Client   // API calls and transfers; bounded by contexts, no Timeout of its own
	rest      *resty.Client
	// hashFirst: the server refused a streamed upload (digest_required),
	// so this store wants every single PUT bound to a SHA-256.
	hashFirst atomic.Bool
}

// Option configures a Client.
type Option func(*Client) error

// WithToken sends token as the bearer token of every API request (never to
// the object store, never in a URL).
func WithToken(token string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(token, "\r\n") {
			return fmt.Errorf("the token must not contain line breaks")
		}
		c.token = token
		return nil
	}
}

// WithTimeout bounds each metadata request (default DefaultTimeout).
// Requests that run sidecars or sweeps on the server are bounded by the
// larger of d and LongTimeout; transfers of file content only by their
// context.
func WithTimeout(d time.Duration) Option {
	return func(c *Client) error {
		if d <= 0 {
			return fmt.Errorf("the timeout must be positive, not %s", d)
		}
		c.timeout = d
		return nil
	}
}

// WithUserAgent sets the User-Agent header of API requests.
func WithUserAgent(ua string) Option {
	return func(c *Client) error {
		if strings.ContainsAny(ua, "\r\n") {
			return fmt.Errorf("the user agent must not contain line breaks")
		}
		c.userAgent = ua
		return nil
	}
}

// WithCA trusts the PEM certificates in pem besides the system roots, for
// a server (or object store) whose certificate a private CA signed.
func WithCA(pem []byte) Option {
	return func(c *Client) error {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("no PEM certificate found in the CA bundle")
		}
		c.caPool = pool
		return nil
	}
}

// WithHTTPClient makes every request (API calls and transfers) through hc,
// for tests or a custom transport. hc's own Timeout, if any, also applies
// to transfers; WithCA then only shapes the websocket dialers.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) error {
		if hc == nil {
			return fmt.Errorf("nil HTTP client")
		}
		c.http = hc
		return nil
	}
}

// New returns a client of the server at baseURL (http or https, with the
// server's path prefix if it has one, e.g. "https://cairn.example/api").
// It makes no request.
func New(baseURL string, opts ...Option) (*Client, error) {
	base, err := parseBase(baseURL)
	if err != nil {
		return nil, err
	}
	c := &Client{base: base, userAgent: DefaultUserAgent, timeout: DefaultTimeout}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.http == nil {
		c.http = &http.Client{Transport: c.transport()}
	}
	// A copy, so resty's settings never touch a caller's client.
	hc := *c.http
	c.rest = resty.NewWithClient(&hc).
		SetLogger(silent{}).
		SetDisableWarn(true).
		SetResponseBodyLimit(maxResponseBytes).
		SetRetryCount(retries).
		SetRetryWaitTime(termkit.RetryFirst).
		SetRetryMaxWaitTime(termkit.RetryMax).
		SetRetryAfter(retryAfter).
		// Requests retry only through the condition an idempotent call
		// adds; without this, resty retries every failed request.
		AddRetryCondition(func(*resty.Response, error) bool { return false })
	return c, nil
}

// retryAfter is resty's wait before the next attempt of a request:
// termkit.Retry's wait after as many failures as the request has had
// (100 ms, 200 ms, 400 ms, ±20 %; resty keeps it within RetryFirst and
// RetryMax). A fresh schedule per call, since requests run concurrently
// and an ExponentialBackOff is not safe for that.
func retryAfter(_ *resty.Client, resp *resty.Response) (time.Duration, error) {
	return nthWait(termkit.Retry(), resp.Request.Attempt), nil
}

// nthWait is the n-th wait of schedule b (the first when n < 1).
func nthWait(b backoff.BackOff, n int) time.Duration {
	d := b.NextBackOff()
	for range n - 1 {
		d = b.NextBackOff()
	}
	return d
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("server URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("server URL %q: the scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("server URL %q has no host", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("server URL %q: give only scheme, host, port and path prefix", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// transfer buffers: larger than net/http's 4 KiB defaults, so that a
// transfer makes fewer system calls.
const ioBufferBytes = 256 << 10

// transport is the default transport with the client's TLS roots.
func (c *Client) transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = c.tlsConfig()
	t.ReadBufferSize, t.WriteBufferSize = ioBufferBytes, ioBufferBytes
	return t
}

// websocketURL is the ws:// or wss:// URL of path (e.g. "/v1/events")
// under the server's base path, with query.
func (c *Client) websocketURL(path string, query url.Values) string {
	u := *c.base
	u.Scheme = "ws"
	if c.base.Scheme == "https" {
		u.Scheme = "wss"
	}
	u.Path = c.base.Path + path
	u.RawQuery = query.Encode()
	return u.String()
}

// header is what every API request carries: the bearer token, if any, and
// the user agent.
func (c *Client) header() http.Header {
	h := http.Header{}
	if c.token != "" {
		h.Set("Authorization", "Bearer "+c.token)
	}
	h.Set("User-Agent", c.userAgent)
	return h
}

// tlsConfig is the TLS configuration for a custom CA, nil for the system
// defaults.
func (c *Client) tlsConfig() *tls.Config {
	if c.caPool == nil {
		return nil
	}
	return &tls.Config{RootCAs: c.caPool, MinVersion: tls.VersionTLS12}
}

// maxErrorBytes bounds how much of an error answer is read.
const maxErrorBytes = 64 << 10

// decodeError turns a non-2xx answer into a *cairn.Error: the envelope's
// reason, message, detail and request ID when the body is one, otherwise
// (an unknown route, a 405, a proxy's page) the status with a short,
// printable detail. It reads at most 64 KiB of the body and closes nothing.
func decodeError(resp *http.Response) error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes)) // what arrived is enough to explain
	return errorFrom(resp.StatusCode, resp.Header, body)
}

// silent is resty's logger: the client never logs (a log line could carry
// a URL the caller considers private).
type silent struct{}

func (silent) Errorf(string, ...any) {}
func (silent) Warnf(string, ...any)  {}
func (silent) Debugf(string, ...any) {}
