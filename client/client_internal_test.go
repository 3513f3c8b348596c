package client

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-resty/resty/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
)

func TestNew(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://h", "http://", "http://u:p@h", "http://h/?q=1", "http://h/#f"} {
		_, err := New(bad)
		require.Error(t, err, "%q", bad)
	}
	_, err := New("http://h", WithToken("a\nb"))
	require.Error(t, err)
	_, err = New("http://h", WithCA([]byte("not pem")))
	require.Error(t, err)
	_, err = New("http://h", WithTimeout(0))
	require.Error(t, err)
}

func TestWebsocketURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ base, want string }{
		{"http://127.0.0.1:8080", "ws://127.0.0.1:8080/v1/events?workspace_id=a+b"},
		{"https://cairn.example/api/", "wss://cairn.example/api/v1/events?workspace_id=a+b"},
	} {
		c, err := New(tc.base)
		require.NoError(t, err)
		require.Equal(t, tc.want, c.websocketURL("/v1/events", url.Values{"workspace_id": {"a b"}}))
	}
	c, err := New("http://h")
	require.NoError(t, err)
	require.Equal(t, "ws://h/v1/events", c.websocketURL("/v1/events", nil))
}

func TestHeader(t *testing.T) {
	t.Parallel()
	c, err := New("http://h", WithToken("tok"), WithUserAgent("ua/1"))
	require.NoError(t, err)
	h := c.header()
	require.Equal(t, "Bearer tok", h.Get("Authorization"))
	require.Equal(t, "ua/1", h.Get("User-Agent"))

	anon, err := New("http://h")
	require.NoError(t, err)
	require.Empty(t, anon.header().Get("Authorization"))
	require.Equal(t, DefaultUserAgent, anon.header().Get("User-Agent"))
}

func TestTLSConfig(t *testing.T) {
	t.Parallel()
	c, err := New("https://h")
	require.NoError(t, err)
	require.Nil(t, c.tlsConfig())
	withCA, err := New("https://h", WithCA(selfSignedPEM(t)))
	require.NoError(t, err)
	require.NotNil(t, withCA.tlsConfig())
	require.NotNil(t, withCA.tlsConfig().RootCAs)
}

func TestDecodeError(t *testing.T) {
	t.Parallel()
	answer := func(status int, body string) error {
		resp := &http.Response{StatusCode: status, Header: http.Header{"X-Request-Id": {"hdr-id"}},
			Body: io.NopCloser(strings.NewReader(body))}
		defer resp.Body.Close()
		return decodeError(resp)
	}
	t.Run("Envelope", func(t *testing.T) {
		err := answer(404, `{"success":false,"request_id":"rid","error":{"code":404,`+
			`"message":"Failed to fetch workspace x","detail":"workspace 'x' does not exist","reason":"workspace_not_found"}}`)
		require.Equal(t, &cairn.Error{Reason: cairn.ReasonWorkspaceNotFound, Detail: "workspace 'x' does not exist",
			Status: 404, Message: "Failed to fetch workspace x", RequestID: "rid"}, err)
	})
	t.Run("PlainUnknownRoute", func(t *testing.T) {
		err := answer(404, "404 page not found\n")
		require.Equal(t, &cairn.Error{Detail: "404 page not found", Status: 404, Message: "HTTP 404 Not Found",
			RequestID: "hdr-id"}, err)
	})
	t.Run("PlainUnauthenticated", func(t *testing.T) {
		err := answer(401, "")
		require.Equal(t, cairn.ReasonUnauthenticated, cairn.ErrorReason(err))
		require.Equal(t, "unauthorized", cairn.ErrorDetail(err))
	})
	t.Run("MarkupIsNotADetail", func(t *testing.T) {
		err := answer(502, "<html><body>Bad Gateway</body></html>")
		require.Equal(t, "bad gateway", cairn.ErrorDetail(err))
		require.Equal(t, 502, err.(*cairn.Error).Status)
	})
	t.Run("LongAndControlCharactersTrimmed", func(t *testing.T) {
		err := answer(500, "\x1b[31m"+strings.Repeat("x", 500))
		d := cairn.ErrorDetail(err)
		require.NotContains(t, d, "\x1b")
		require.LessOrEqual(t, len(d), maxPlainDetail+len("…"))
	})
}

// selfSignedPEM returns a fresh self-signed CA certificate in PEM.
func selfSignedPEM(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairn-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestNthWait(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{{0, 100 * time.Millisecond}, {1, 100 * time.Millisecond}, {2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond}, {6, 2 * time.Second}, {9, 2 * time.Second}} {
		b := termkit.Retry()
		b.RandomizationFactor = 0
		require.Equal(t, c.want, nthWait(b, c.attempt), "attempt %d", c.attempt)
	}
	for attempt := 1; attempt <= retries; attempt++ {
		want := 100 * time.Millisecond << (attempt - 1)
		d, err := retryAfter(nil, &resty.Response{Request: &resty.Request{Attempt: attempt}})
		require.NoError(t, err)
		require.InDelta(t, want, d, 0.2*float64(want)+1, "attempt %d: ±20 %%", attempt)
	}
}

// TestIdempotentRetry drops the connection of the first two requests: a GET
// comes through on its third attempt, after termkit.Retry's waits; a POST
// is never sent twice.
func TestIdempotentRetry(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		k        call
		attempts int32
		ok       bool
	}{
		{"GETRetried", call{method: http.MethodGet, path: "/v1/workspaces", idempotent: true}, 3, true},
		{"POSTNotRetried", call{method: http.MethodPost, path: "/v1/workspaces"}, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if n.Add(1) <= 2 {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"success":true,"data":{}}`)) // the client's answer tells
			}))
			defer srv.Close()
			cl, err := New(srv.URL)
			require.NoError(t, err)
			start := time.Now()
			err = cl.do(t.Context(), c.k, nil)
			require.Equal(t, c.ok, err == nil, "%v", err)
			require.Equal(t, c.attempts, n.Load())
			if c.ok {
				require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond+160*time.Millisecond, "waited 100 ms, then 200 ms ±20 %")
			}
		})
	}
}
