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
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
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
