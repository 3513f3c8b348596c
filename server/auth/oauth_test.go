package auth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
)

const (
	// testAudience is the resource the test guard's discovery names, and
	// so the audience of its access tokens.
	testAudience = "https://cairn.example/v1/mcp"
	testBase     = "https://cairn.example"
	testMetadata = `resource_metadata="https://cairn.example/.well-known/oauth-protected-resource/v1/mcp"`
)

// testAS is an authorization server on loopback: its RFC 8414 metadata (or
// only an OpenID Connect discovery document) and its JWKS, with an RSA and
// an EC key made for the test.
type testAS struct {
	srv    *httptest.Server
	issuer string
	rsa    *rsa.PrivateKey
	ec     *ecdsa.PrivateKey

	mu        sync.Mutex
	published []jose.JSONWebKey
	jwksHits  atomic.Int32
}

// newTestAS starts an authorization server whose issuer has path (""
// or "/tenant"); oidc serves only the OpenID Connect document.
func newTestAS(t *testing.T, path string, oidc bool) *testAS {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ek, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	as := &testAS{rsa: rk, ec: ek}
	as.publish(
		jose.JSONWebKey{Key: &rk.PublicKey, KeyID: "rsa-1", Algorithm: "RS256", Use: "sig"},
		jose.JSONWebKey{Key: &ek.PublicKey, KeyID: "ec-1", Algorithm: "ES256", Use: "sig"},
	)
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": as.issuer, "jwks_uri": as.srv.URL + "/keys"})
	}
	if oidc {
		mux.HandleFunc("GET "+path+"/.well-known/openid-configuration", meta)
	} else {
		mux.HandleFunc("GET /.well-known/oauth-authorization-server"+path, meta)
	}
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		as.jwksHits.Add(1)
		as.mu.Lock()
		set := jose.JSONWebKeySet{Keys: as.published}
		as.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
	as.srv = httptest.NewServer(mux)
	t.Cleanup(as.srv.Close)
	as.issuer = as.srv.URL + path
	return as
}

// publish replaces the JWKS.
func (as *testAS) publish(keys ...jose.JSONWebKey) {
	as.mu.Lock()
	as.published = keys
	as.mu.Unlock()
}

// claims are a valid access token's claims for as: scope and the rest
// may be changed by edit.
func (as *testAS) claims(scope string, edit ...func(map[string]any)) map[string]any {
	now := time.Now()
	c := map[string]any{
		"iss": as.issuer, "sub": "user-1", "aud": testAudience, "scope": scope, "client_id": "cli",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
	}
	for _, e := range edit {
		e(c)
	}
	return c
}

// sign signs claims with alg and key, kid in the header.
func sign(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: key, KeyID: kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"))
	require.NoError(t, err)
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	require.NoError(t, err)
	return s
}

func (as *testAS) rs256(t *testing.T, claims map[string]any) string {
	return sign(t, jose.RS256, as.rsa, "rsa-1", claims)
}

func (as *testAS) es256(t *testing.T, claims map[string]any) string {
	return sign(t, jose.ES256, as.ec, "ec-1", claims)
}

// oauthGuard mounts the test routes, GET /v1/info and GET /v1/whoami (the
// actor and scopes, as JSON) behind a guard with the static test tokens
// that accepts access tokens of issuers for testAudience.
func oauthGuard(t *testing.T, log *slog.Logger, issuers ...string) (*Guard, http.Handler) {
	t.Helper()
	g, err := New(Config{
		Tokens:    testTokens(),
		Logger:    log,
		Discovery: &Discovery{Path: "/v1/mcp", Resource: testAudience, AuthorizationServers: issuers},
		OAuth:     &OAuth{Issuers: issuers, Audience: testAudience},
	})
	require.NoError(t, err)
	require.NotNil(t, g.oauth)
	whoami := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"actor": cairn.ActorFrom(r.Context()), "scopes": cairn.ScopesOf(r.Context(), nil)})
	})
	routes := append(testRoutes(),
		route.Route{Method: http.MethodGet, Path: "/v1/info", Scope: route.Any, Handler: ok},
		route.Route{Method: http.MethodGet, Path: "/v1/whoami", Scope: route.Read, Handler: whoami})
	h, err := g.Mount("", append(routes, g.DiscoveryRoutes()...))
	require.NoError(t, err)
	return g, h
}

// call sends method path with the bearer token.
func call(h http.Handler, method, path, token string) *httptest.ResponseRecorder {
	return serveURL(h, method, testBase+path, map[string]string{"Authorization": "Bearer " + token})
}

// requireInvalid asserts the refusal of an access token on GET
// /v1/workspaces: 401, the envelope, the challenge with invalid_token.
func requireInvalid(t *testing.T, h http.Handler, token, msg string) {
	t.Helper()
	rec := call(h, http.MethodGet, "/v1/workspaces", token)
	require.Equal(t, http.StatusUnauthorized, rec.Code, msg)
	require.Equal(t, `Bearer realm="cairn", error="invalid_token", scope="read", `+testMetadata,
		rec.Header().Get("WWW-Authenticate"), msg)
	require.Empty(t, rec.Header().Get("X-Actor"), msg)
	e := decode(t, rec)
	require.Equal(t, "unauthenticated", e.Error.Reason, msg)
	require.Equal(t, "Invalid access token", e.Error.Message, msg)
}

func TestOAuthAccepted(t *testing.T) {
	t.Parallel()
	as := newTestAS(t, "/tenant-1", false)
	_, h := oauthGuard(t, nil, as.issuer)

	tok := as.rs256(t, as.claims("openid read write profile read"))
	rec := call(h, http.MethodGet, "/v1/whoami", tok)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"actor":"oauth:user-1","scopes":["read","write"]}`, rec.Body.String(),
		"unknown scopes are ignored, a repeated one counted once")
	rec = call(h, http.MethodPost, "/v1/workspaces", tok)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "oauth:user-1", rec.Header().Get("X-Actor"))

	// A valid token without the route's scope: 403 as for a static token.
	rec = call(h, http.MethodDelete, "/v1/workspaces/w1", tok)
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, `Bearer realm="cairn", error="insufficient_scope", scope="admin", `+testMetadata,
		rec.Header().Get("WWW-Authenticate"))
	e := decode(t, rec)
	require.Equal(t, "forbidden", e.Error.Reason)
	require.Equal(t, "Token 'oauth:user-1' lacks scope 'admin'", e.Error.Message)

	// ES256, aud as an array, iat within the leeway, no scope at all.
	ec := as.es256(t, as.claims("mcp", func(c map[string]any) {
		c["aud"] = []string{"https://other.example", testAudience}
		c["sub"] = "auth0|5f7c8ec7c33c6c004bbafe82"
		c["iat"] = time.Now().Add(20 * time.Second).Unix()
	}))
	rec = call(h, http.MethodPost, "/v1/mcp", ec)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "oauth:auth0|5f7c8ec7c33c6c004bbafe82", rec.Header().Get("X-Actor"))
	require.Equal(t, http.StatusForbidden, call(h, http.MethodGet, "/v1/workspaces", ec).Code)

	none := as.rs256(t, as.claims("", func(c map[string]any) { delete(c, "scope") }))
	rec = call(h, http.MethodGet, "/v1/info", none)
	require.Equal(t, http.StatusOK, rec.Code, "any valid token, whatever its scopes")
	require.Equal(t, "oauth:user-1", rec.Header().Get("X-Actor"))
	require.Equal(t, http.StatusForbidden, call(h, http.MethodGet, "/v1/workspaces", none).Code)

	require.Equal(t, int32(1), as.jwksHits.Load(), "the keys are fetched once and kept")
}

func TestOAuthRefused(t *testing.T) {
	t.Parallel()
	as := newTestAS(t, "", false)
	other := newTestAS(t, "", false)
	var logs bytes.Buffer
	_, h := oauthGuard(t, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})), as.issuer)
	hs, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: jose.JSONWebKey{Key: []byte(strings.Repeat("k", 32)), KeyID: "rsa-1"}}, nil)
	require.NoError(t, err)
	hs256, err := jwt.Signed(hs).Claims(as.claims("read")).Serialize()
	require.NoError(t, err)
	b64 := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	algNone := b64(map[string]string{"alg": "none", "kid": "rsa-1"}) + "." + b64(as.claims("read")) + "."
	valid := as.rs256(t, as.claims("read"))
	parts := strings.Split(valid, ".")

	cases := map[string]string{
		"WrongAudience":               as.rs256(t, as.claims("read", func(c map[string]any) { c["aud"] = "https://other.example/v1/mcp" })),
		"AudienceArray":               as.rs256(t, as.claims("read", func(c map[string]any) { c["aud"] = []string{"a", "b"} })),
		"NoAudience":                  as.rs256(t, as.claims("read", func(c map[string]any) { delete(c, "aud") })),
		"OtherIssuer":                 other.rs256(t, other.claims("read")),
		"OtherIssuersKeyClaimingOurs": sign(t, jose.RS256, other.rsa, "rsa-1", as.claims("read")),
		"IssuerWithSlash":             as.rs256(t, as.claims("read", func(c map[string]any) { c["iss"] = as.issuer + "/" })),
		"Expired": as.rs256(t, as.claims("read", func(c map[string]any) {
			c["exp"] = time.Now().Add(-time.Second).Unix()
		})),
		"NoExpiry":          as.rs256(t, as.claims("read", func(c map[string]any) { delete(c, "exp") })),
		"NotYet":            as.rs256(t, as.claims("read", func(c map[string]any) { c["nbf"] = time.Now().Add(2 * time.Minute).Unix() })),
		"IssuedLater":       as.rs256(t, as.claims("read", func(c map[string]any) { c["iat"] = time.Now().Add(2 * time.Minute).Unix() })),
		"NoSubject":         as.rs256(t, as.claims("read", func(c map[string]any) { delete(c, "sub") })),
		"SubjectSpace":      as.rs256(t, as.claims("read", func(c map[string]any) { c["sub"] = "a b" })),
		"SubjectControl":    as.rs256(t, as.claims("read", func(c map[string]any) { c["sub"] = "a\nb" })),
		"SubjectLong":       as.rs256(t, as.claims("read", func(c map[string]any) { c["sub"] = strings.Repeat("s", 256) })),
		"ScopeArray":        as.rs256(t, as.claims("read", func(c map[string]any) { c["scope"] = []string{"read"} })),
		"AlgNone":           algNone,
		"HS256":             hs256,
		"BadSignature":      parts[0] + "." + b64(as.claims("read admin")) + "." + parts[2],
		"ES256HeaderRSAKey": sign(t, jose.ES256, as.ec, "rsa-1", as.claims("read")),
		"Garbage":           "a.b.c",
		"Oversized":         parts[0] + "." + strings.Repeat("A", MaxAccessTokenBytes) + "." + parts[2],
		"OversizedNoDot":    strings.Repeat("x", MaxAccessTokenBytes+1),
	}
	for name, tok := range cases {
		requireInvalid(t, h, tok, name)
		require.NotContains(t, logs.String(), tok, "tokens are never logged")
	}
	require.Contains(t, logs.String(), "access token refused")
	require.Equal(t, int32(0), other.jwksHits.Load(), "an issuer not configured is never asked")

	// The valid one passes, so the refusals were the changes'.
	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", valid).Code)
	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces",
		as.rs256(t, as.claims("read", func(c map[string]any) { c["sub"] = strings.Repeat("s", 255) }))).Code)
}

// TestOAuthOversizedUnread: a bearer value past the bound is refused
// before it is parsed: its issuer's keys are not even fetched.
func TestOAuthOversizedUnread(t *testing.T) {
	t.Parallel()
	as := newTestAS(t, "", false)
	_, h := oauthGuard(t, nil, as.issuer)
	big := as.rs256(t, as.claims("read", func(c map[string]any) { c["pad"] = strings.Repeat("p", MaxAccessTokenBytes) }))
	requireInvalid(t, h, big, "oversized")
	require.Equal(t, int32(0), as.jwksHits.Load())
}

func TestOAuthKeyRotation(t *testing.T) {
	t.Parallel()
	as := newTestAS(t, "", false)
	g, h := oauthGuard(t, nil, as.issuer)
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	g.oauth.now = func() time.Time { return time.Unix(0, now.Load()) }
	advance := func(d time.Duration) { now.Add(int64(d)) }
	// The clock is moved on by more than a token's usual life.
	long := func(c map[string]any) { c["exp"] = time.Now().Add(time.Hour).Unix() }

	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", as.rs256(t, as.claims("read", long))).Code)
	require.Equal(t, int32(1), as.jwksHits.Load())

	// The server rotates to a new key: a token with its kid makes the
	// guard fetch the keys again, once, a minute after the last fetch.
	rotated, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	as.publish(jose.JSONWebKey{Key: &rotated.PublicKey, KeyID: "rsa-2", Algorithm: "RS256", Use: "sig"})
	tok2 := sign(t, jose.RS256, rotated, "rsa-2", as.claims("read", long))
	requireInvalid(t, h, tok2, "the first fetch was less than a minute ago")
	require.Equal(t, int32(1), as.jwksHits.Load())
	advance(minRefetch)
	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok2).Code)
	require.Equal(t, int32(2), as.jwksHits.Load())
	requireInvalid(t, h, as.rs256(t, as.claims("read", long)), "the retired key is gone")

	// Another unknown kid within the minute: no fetch.
	third, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	tok3 := sign(t, jose.RS256, third, "rsa-3", as.claims("read", long))
	as.publish(jose.JSONWebKey{Key: &third.PublicKey, KeyID: "rsa-3", Algorithm: "RS256", Use: "sig"},
		jose.JSONWebKey{Key: &rotated.PublicKey, KeyID: "rsa-2", Algorithm: "RS256", Use: "sig"})
	requireInvalid(t, h, tok3, "unknown kid within the minute")
	requireInvalid(t, h, tok3, "unknown kid within the minute, again")
	require.Equal(t, int32(2), as.jwksHits.Load(), "at most one fetch a minute")
	advance(minRefetch)
	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok3).Code)
	require.Equal(t, int32(3), as.jwksHits.Load())

	// Known keys are fetched again after their time.
	advance(keysTTL - time.Second)
	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok2).Code)
	require.Equal(t, int32(3), as.jwksHits.Load())
	advance(time.Second)
	require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok2).Code)
	require.Equal(t, int32(4), as.jwksHits.Load())
}

// TestOAuthServerDown: keys that cannot be fetched refuse the token (401,
// never 5xx); keys past their time are not used when the server is down.
func TestOAuthServerDown(t *testing.T) {
	t.Parallel()
	t.Run("Never", func(t *testing.T) {
		t.Parallel()
		as := newTestAS(t, "", false)
		_, h := oauthGuard(t, nil, as.issuer)
		tok := as.rs256(t, as.claims("read"))
		as.srv.Close()
		requireInvalid(t, h, tok, "server down")
		requireInvalid(t, h, tok, "server down, no new attempt")
	})
	t.Run("AfterFetch", func(t *testing.T) {
		t.Parallel()
		as := newTestAS(t, "", false)
		g, h := oauthGuard(t, nil, as.issuer)
		var now atomic.Int64
		now.Store(time.Now().UnixNano())
		g.oauth.now = func() time.Time { return time.Unix(0, now.Load()) }
		tok := as.rs256(t, as.claims("read", func(c map[string]any) { c["exp"] = time.Now().Add(time.Hour).Unix() }))
		require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok).Code)
		as.srv.Close()
		require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok).Code, "the keys held")
		now.Add(int64(keysTTL - time.Second))
		require.Equal(t, http.StatusOK, call(h, http.MethodGet, "/v1/workspaces", tok).Code, "the keys still held")
		now.Add(int64(time.Second))
		requireInvalid(t, h, tok, "keys past their time, server down")
	})
}

func TestOAuthDiscovery(t *testing.T) {
	t.Parallel()
	t.Run("OpenIDConnectFallback", func(t *testing.T) {
		t.Parallel()
		as := newTestAS(t, "/realms/cairn", true)
		_, h := oauthGuard(t, nil, as.issuer)
		rec := call(h, http.MethodGet, "/v1/workspaces", as.es256(t, as.claims("read")))
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, "oauth:user-1", rec.Header().Get("X-Actor"))
	})
	t.Run("MetadataOfAnotherIssuer", func(t *testing.T) {
		t.Parallel()
		as := newTestAS(t, "", false)
		issuer := as.issuer
		as.issuer = "https://id.example" // what the metadata says
		_, h := oauthGuard(t, nil, issuer)
		tok := as.rs256(t, as.claims("read", func(c map[string]any) { c["iss"] = issuer }))
		requireInvalid(t, h, tok, "metadata naming another issuer")
		require.Equal(t, int32(0), as.jwksHits.Load())
	})
	require.Equal(t, []string{
		"https://id.example/.well-known/oauth-authorization-server/t/1",
		"https://id.example/t/1/.well-known/openid-configuration",
	}, metadataURLs("https://id.example/t/1/"))
	require.Equal(t, []string{
		"https://id.example/.well-known/oauth-authorization-server",
		"https://id.example/.well-known/openid-configuration",
	}, metadataURLs("https://id.example"))
}

// TestOAuthStaticTokens: cairn's own tokens work as before beside access
// tokens, one with dots included; an unknown one that is no JWT gets the
// challenge it always got.
func TestOAuthStaticTokens(t *testing.T) {
	t.Parallel()
	as := newTestAS(t, "", false)
	_, h := oauthGuard(t, nil, as.issuer)
	rec := call(h, http.MethodDelete, "/v1/workspaces/w1", tokenFor(all))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "all", rec.Header().Get("X-Actor"))
	rec = call(h, http.MethodDelete, "/v1/workspaces/w1", tokenFor(route.Admin))
	require.Equal(t, http.StatusForbidden, rec.Code)
	require.Equal(t, `Bearer realm="cairn", error="insufficient_scope", scope="admin", `+testMetadata,
		rec.Header().Get("WWW-Authenticate"))
	rec = call(h, http.MethodGet, "/v1/workspaces", "not-a-configured-token")
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, `Bearer realm="cairn", scope="read", `+testMetadata, rec.Header().Get("WWW-Authenticate"))
	require.Equal(t, "Authentication required", decode(t, rec).Error.Message)
	rec = serveURL(h, http.MethodGet, testBase+"/v1/workspaces", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, `Bearer realm="cairn", scope="read", `+testMetadata, rec.Header().Get("WWW-Authenticate"))
	require.Equal(t, int32(0), as.jwksHits.Load())

	dotted := "a.b." + strings.Repeat("c", MaxAccessTokenBytes)
	g, err := New(Config{
		Tokens: []Token{{Name: "dotted", SHA256: hashOf(dotted), Scopes: []route.Scope{route.Read}}},
		OAuth:  &OAuth{Issuers: []string{as.issuer}, Audience: testAudience},
	})
	require.NoError(t, err)
	h, err = g.Mount("", testRoutes())
	require.NoError(t, err)
	rec = call(h, http.MethodGet, "/v1/workspaces", dotted)
	require.Equal(t, http.StatusOK, rec.Code, "a static token is checked first, whatever its shape and length")
	require.Equal(t, "dotted", rec.Header().Get("X-Actor"))
}

// TestOAuthOff: without an issuer or an audience no access token is
// accepted, and a JWT is an unknown token like any other; with access
// tokens on, authentication is on even without static tokens.
func TestOAuthOff(t *testing.T) {
	t.Parallel()
	as := newTestAS(t, "", false)
	tok := as.rs256(t, as.claims("read"))
	for name, o := range map[string]*OAuth{
		"NoAudience": {Issuers: []string{as.issuer}},
		"NoIssuer":   {Audience: testAudience},
		"Nil":        nil,
	} {
		g, err := New(Config{Tokens: testTokens(), OAuth: o})
		require.NoError(t, err, name)
		require.Nil(t, g.oauth, name)
		h, err := g.Mount("", testRoutes())
		require.NoError(t, err)
		rec := call(h, http.MethodGet, "/v1/workspaces", tok)
		require.Equal(t, http.StatusUnauthorized, rec.Code, name)
		require.Equal(t, `Bearer realm="cairn", scope="read"`, rec.Header().Get("WWW-Authenticate"), name)
	}
	require.Equal(t, int32(0), as.jwksHits.Load())

	_, err := New(Config{OAuth: &OAuth{Issuers: []string{as.issuer}, Audience: "a b"}})
	require.EqualError(t, err, `oauth: audience: must be 1 to 2048 printable ASCII characters without spaces, got "a b"`)

	g, err := New(Config{OAuth: &OAuth{Issuers: []string{as.issuer}, Audience: testAudience}})
	require.NoError(t, err)
	h, err := g.Mount("", testRoutes())
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, serveURL(h, http.MethodGet, testBase+"/v1/workspaces", nil).Code,
		"access tokens on: a token is needed")
	rec := call(h, http.MethodGet, "/v1/workspaces", tok)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "oauth:user-1", rec.Header().Get("X-Actor"))
}
