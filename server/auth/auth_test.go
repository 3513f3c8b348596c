package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/route"
)

var allScopes = []route.Scope{route.Read, route.Write, route.Admin, route.Shell, route.MCP}

// all stands for "no scope left out" in tokenFor.
const all route.Scope = ""

// table is a route summary (each route and its scope), for the guard's own
// tests; the real declarations are the front doors' (their tests check
// them, and the server's auth walk goes over what is mounted).
var table = []struct {
	pattern string
	scope   route.Scope
}{
	{"GET /liveness/alive", route.Public},
	{"GET /liveness/ready", route.Public},
	{"POST /v1/workspaces", route.Write},
	{"GET /v1/workspaces", route.Read},
	{"GET /v1/workspaces/{workspaceID}", route.Read},
	{"DELETE /v1/workspaces/{workspaceID}", route.Admin},
	{"GET /v1/audit", route.Admin},
	{"GET /v1/workspaces/{workspaceID}/shell", route.Shell},
	{"/v1/mcp", route.MCP},
}

// testRoutes declares the table with ok as every handler.
func testRoutes() []route.Route {
	rs := make([]route.Route, 0, len(table))
	for _, row := range table {
		method, path, found := strings.Cut(row.pattern, " ")
		if !found {
			method, path = "", row.pattern
		}
		rs = append(rs, route.Route{Method: method, Path: path, Scope: row.scope, Handler: ok})
	}
	return rs
}

func hashOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// tokenFor names the token that carries every scope but skip (all of them
// when skip is all).
func tokenFor(skip route.Scope) string { return "secret-without-" + string(skip) + "-0123456789abcdef" }

func testTokens() []Token {
	var tokens []Token
	for _, skip := range append([]route.Scope{all}, allScopes...) {
		var scopes []route.Scope
		for _, s := range allScopes {
			if s != skip {
				scopes = append(scopes, s)
			}
		}
		name := "all"
		if skip != all {
			name = "no-" + string(skip)
		}
		tokens = append(tokens, Token{Name: name, SHA256: hashOf(tokenFor(skip)), Scopes: scopes})
	}
	return tokens
}

// ok is the stub front door: 200 and the actor it saw.
var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if a := cairn.ActorFrom(r.Context()); a != nil {
		w.Header().Set("X-Actor", *a)
	}
	w.WriteHeader(http.StatusOK)
})

func newGuard(t *testing.T, cfg Config) http.Handler {
	t.Helper()
	return newGuardUnder(t, cfg, "")
}

// newGuardUnder mounts the test routes under prefix.
func newGuardUnder(t *testing.T, cfg Config, prefix string) http.Handler {
	t.Helper()
	g, err := New(cfg)
	require.NoError(t, err)
	h, err := g.Mount(prefix, testRoutes())
	require.NoError(t, err)
	return h
}

// requestFor builds a request for a table pattern under prefix.
func requestFor(prefix, pattern string) *http.Request {
	method, path, found := strings.Cut(pattern, " ")
	if !found {
		method, path = http.MethodPost, pattern
	}
	path = strings.NewReplacer("{workspaceID}", "w1", "{artifactID}", "a1", "{shellID}", "s1").Replace(path)
	return httptest.NewRequest(method, prefix+path, nil)
}

type answer struct {
	Success   bool   `json:"success"`
	RequestID string `json:"request_id"`
	Error     struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Reason  string `json:"reason"`
	} `json:"error"`
}

func decode(t *testing.T, rec *httptest.ResponseRecorder) answer {
	t.Helper()
	var e answer
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), rec.Body.String())
	require.Equal(t, rec.Code, e.Error.Code)
	require.NotEmpty(t, e.RequestID)
	require.Equal(t, e.RequestID, rec.Header().Get("X-Request-ID"))
	return e
}

func TestAuthRouteTable(t *testing.T) {
	t.Parallel()
	const prefix = "/api"
	h := newGuardUnder(t, Config{Tokens: testTokens()}, prefix+"/")
	for _, rt := range table {
		t.Run(rt.pattern, func(t *testing.T) {
			t.Parallel()
			serve := func(token string) *httptest.ResponseRecorder {
				r := requestFor(prefix, rt.pattern)
				if token != "" {
					r.Header.Set("Authorization", "Bearer "+token)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				return rec
			}
			if rt.scope == route.Public {
				require.Equal(t, http.StatusOK, serve("").Code)
				return
			}
			rec := serve("")
			require.Equal(t, http.StatusUnauthorized, rec.Code)
			require.Equal(t, `Bearer realm="cairn", scope="`+string(rt.scope)+`"`, rec.Header().Get("WWW-Authenticate"))
			e := decode(t, rec)
			require.Equal(t, "unauthenticated", e.Error.Reason)
			require.Equal(t, "Authentication required", e.Error.Message)

			require.Equal(t, http.StatusUnauthorized, serve("not-a-configured-token").Code)

			rec = serve(tokenFor(rt.scope))
			require.Equal(t, http.StatusForbidden, rec.Code)
			e = decode(t, rec)
			require.Equal(t, "forbidden", e.Error.Reason)
			require.Equal(t, "Token 'no-"+string(rt.scope)+"' lacks scope '"+string(rt.scope)+"'", e.Error.Message)

			rec = serve(tokenFor(all))
			require.Equal(t, http.StatusOK, rec.Code)
			require.Equal(t, "all", rec.Header().Get("X-Actor"))
		})
	}
}

// TestAuthMountFailsClosed shows that a route cannot be served without a
// declared scope: Mount refuses it (and so does server.Open), and a request
// for anything not declared is answered by the guard itself, never passed
// on.
func TestAuthMountFailsClosed(t *testing.T) {
	t.Parallel()
	g, err := New(Config{})
	require.NoError(t, err)
	for name, rs := range map[string][]route.Route{
		"NoScope":      {{Method: "GET", Path: "/v1/forgotten", Handler: ok}},
		"UnknownScope": {{Method: "GET", Path: "/v1/forgotten", Scope: "everyone", Handler: ok}},
		"NoHandler":    {{Method: "GET", Path: "/v1/forgotten", Scope: route.Read}},
		"Relative":     {{Method: "GET", Path: "v1/forgotten", Scope: route.Read, Handler: ok}},
		"Twice":        {{Method: "GET", Path: "/v1/x", Scope: route.Read, Handler: ok}, {Method: "GET", Path: "/v1/x", Scope: route.Admin, Handler: ok}},
		"Collide":      {{Method: "GET", Path: "/v1/{a}/x", Scope: route.Read, Handler: ok}, {Method: "GET", Path: "/v1/x/{b}", Scope: route.Read, Handler: ok}},
	} {
		_, err := g.Mount("", rs)
		require.Error(t, err, name)
	}

	reached := false
	spy := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true })
	h, err := g.Mount("", []route.Route{{Method: "GET", Path: "/v1/workspaces", Scope: route.Read, Handler: spy}})
	require.NoError(t, err)
	for _, target := range []string{"/nope", "/v1/mcp", "/v1/workspaces/w1", "/v1/workspaces/", "/api/v1/workspaces"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		require.Equal(t, http.StatusNotFound, rec.Code, target)
		require.Equal(t, "404 page not found\n", rec.Body.String(), target)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPatch, "/v1/workspaces", nil))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1//workspaces", nil))
	require.Equal(t, http.StatusMovedPermanently, rec.Code)
	require.False(t, reached, "nothing undeclared reaches a handler")
}

// TestAuthContextFailsClosed checks what the route's context says: the
// token's scopes, or explicitly that authentication is off; a context with
// neither is allowed nothing.
func TestAuthContextFailsClosed(t *testing.T) {
	t.Parallel()
	require.False(t, cairn.ScopeAllowed(context.Background(), "read"))
	var seen context.Context
	spy := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = r.Context() })
	rs := []route.Route{{Method: "GET", Path: "/x", Scope: route.Read, Handler: spy}}

	g, err := New(Config{})
	require.NoError(t, err)
	h, err := g.Mount("", rs)
	require.NoError(t, err)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	require.True(t, cairn.ScopeAllowed(seen, "write"), "authentication off is said, and allows every scope")

	g, err = New(Config{Tokens: []Token{{Name: "r", SHA256: hashOf("reader-token-0123456789"), Scopes: []route.Scope{route.Read}}}})
	require.NoError(t, err)
	h, err = g.Mount("", rs)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodGet, "/x", nil)
	r.Header.Set("Authorization", "Bearer reader-token-0123456789")
	h.ServeHTTP(httptest.NewRecorder(), r)
	require.True(t, cairn.ScopeAllowed(seen, "read"))
	require.False(t, cairn.ScopeAllowed(seen, "write"))
}

// TestAuthBoundsBodies: every route reads at most MaxBodyBytes.
func TestAuthBoundsBodies(t *testing.T) {
	t.Parallel()
	var readErr error
	reader := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { _, readErr = io.Copy(io.Discard, r.Body) })
	g, err := New(Config{})
	require.NoError(t, err)
	h, err := g.Mount("", []route.Route{{Method: "POST", Path: "/x", Scope: route.Write, Handler: reader}})
	require.NoError(t, err)
	big := strings.Repeat("a", MaxBodyBytes+1)

	// A body of unknown length is cut at the bound as the route reads it.
	chunked := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(big))
	chunked.ContentLength = -1
	h.ServeHTTP(httptest.NewRecorder(), chunked)
	_, tooBig := errors.AsType[*http.MaxBytesError](readErr)
	require.True(t, tooBig, "read error: %v", readErr)

	// One declared over the bound fails at the first read, before a byte
	// of it is taken, and the answer closes the connection.
	readErr = nil
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(big)))
	_, tooBig = errors.AsType[*http.MaxBytesError](readErr)
	require.True(t, tooBig, "read error: %v", readErr)
	require.Equal(t, "close", rec.Header().Get("Connection"))
}

func TestAuthNoTokensNoAuthentication(t *testing.T) {
	t.Parallel()
	h := newGuard(t, Config{})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/v1/workspaces/w1", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	require.Empty(t, rec.Header().Get("X-Actor"), "no actor when authentication is off")
}

func TestAuthSchemes(t *testing.T) {
	t.Parallel()
	h := newGuard(t, Config{Tokens: testTokens()})
	for header, want := range map[string]int{
		"Bearer " + tokenFor(all):     http.StatusOK,
		"bearer " + tokenFor(all):     http.StatusOK,
		"Basic " + tokenFor(all):      http.StatusUnauthorized,
		tokenFor(all):                 http.StatusUnauthorized,
		"Bearer":                      http.StatusUnauthorized,
		"Bearer ":                     http.StatusUnauthorized,
		"Bearer " + tokenFor(all)[1:]: http.StatusUnauthorized,
	} {
		r := httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
		r.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.Equal(t, want, rec.Code, header)
	}
	// Tokens never travel in URLs: the query string is not consulted.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/workspaces?token="+tokenFor(all)+"&access_token="+tokenFor(all), nil))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

// TestAuthComparesEveryHash is not parallel: it swaps compare.
func TestAuthComparesEveryHash(t *testing.T) {
	var calls atomic.Int32
	defer func(orig func(x, y []byte) int) { compare = orig }(compare)
	compare = func(x, y []byte) int { calls.Add(1); return origCompare(x, y) }

	tokens := testTokens()
	g, err := New(Config{Tokens: tokens})
	require.NoError(t, err)
	for i, tok := range []string{tokenFor(all), tokenFor(route.MCP), "unknown"} {
		calls.Store(0)
		r := httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		got, found := g.authenticate(r)
		require.Equal(t, int32(len(tokens)), calls.Load(), "every hash is compared, match or not")
		switch i {
		case 0:
			require.True(t, found)
			require.Equal(t, "all", got.name) // the first configured
		case 1:
			require.True(t, found)
			require.Equal(t, "no-mcp", got.name) // the last configured
		default:
			require.False(t, found)
		}
	}
}

func TestAuthOrigin(t *testing.T) {
	t.Parallel()
	h := newGuard(t, Config{Tokens: testTokens(), AllowedOrigins: []string{"https://UI.example:8443"}})
	for origin, want := range map[string]int{
		"":                        http.StatusUnauthorized, // no Origin: on to authentication
		"https://ui.example:8443": http.StatusUnauthorized,
		"HTTPS://UI.EXAMPLE:8443": http.StatusUnauthorized,
		"https://ui.example":      http.StatusForbidden,
		"https://evil.example":    http.StatusForbidden,
		"null":                    http.StatusForbidden,
	} {
		for _, target := range []string{"/v1/workspaces", "/liveness/alive"} {
			r := httptest.NewRequest(http.MethodGet, target, nil)
			if origin != "" {
				r.Header.Set("Origin", origin)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			if target == "/liveness/alive" && want == http.StatusUnauthorized {
				require.Equal(t, http.StatusOK, rec.Code, origin)
				continue
			}
			require.Equal(t, want, rec.Code, origin+" "+target)
			if want == http.StatusForbidden {
				e := decode(t, rec)
				require.Equal(t, "origin_not_allowed", e.Error.Reason)
				require.Equal(t, "Origin not allowed", e.Error.Message)
			}
		}
	}
	// Origin is checked before authentication, even with a valid token.
	r := httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
	r.Header.Set("Origin", "https://evil.example")
	r.Header.Set("Authorization", "Bearer "+tokenFor(all))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusForbidden, rec.Code)
}

func withLocalAddr(r *http.Request, addr string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), http.LocalAddrContextKey, net.TCPAddrFromAddrPort(mustAddrPort(addr))))
}

func TestAuthHostGuard(t *testing.T) {
	t.Parallel()
	cases := []struct {
		local, host string
		guard       bool
		want        int
	}{
		{"127.0.0.1:3001", "evil.example", true, http.StatusForbidden},
		{"127.0.0.1:3001", "evil.example:3001", true, http.StatusForbidden},
		{"[::1]:3001", "10.0.0.1", true, http.StatusForbidden},
		{"127.0.0.1:3001", "localhost:3001", true, http.StatusOK},
		{"127.0.0.1:3001", "api.localhost", true, http.StatusOK},
		{"127.0.0.1:3001", "127.0.0.2", true, http.StatusOK},
		{"[::1]:3001", "[::1]:3001", true, http.StatusOK},
		{"10.0.0.5:3001", "evil.example", true, http.StatusOK}, // not a loopback listener
		{"127.0.0.1:3001", "evil.example", false, http.StatusOK},
	}
	for _, tc := range cases {
		h := newGuard(t, Config{HostGuard: tc.guard})
		for _, target := range []string{"/v1/workspaces", "/liveness/ready"} {
			r := withLocalAddr(httptest.NewRequest(http.MethodGet, target, nil), tc.local)
			r.Host = tc.host
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			require.Equal(t, tc.want, rec.Code, "%+v %s", tc, target)
			if tc.want == http.StatusForbidden {
				e := decode(t, rec)
				require.Equal(t, "host_not_allowed", e.Error.Reason)
				require.Equal(t, `Forbidden: invalid Host header "`+tc.host+`"`, e.Error.Message)
			}
		}
	}
}

func TestAuthHostGuardBeforeAuthentication(t *testing.T) {
	t.Parallel()
	h := newGuard(t, Config{Tokens: testTokens(), HostGuard: true})
	srv := httptest.NewServer(h) // a real loopback listener sets LocalAddrContextKey
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/v1/workspaces", nil)
	require.NoError(t, err)
	req.Host = "rebound.example"
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
}

func TestAuthRequestIDHeader(t *testing.T) {
	t.Parallel()
	h := newGuard(t, Config{Tokens: testTokens(), RequestIDHeader: "X-Trace"})
	r := httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
	r.Header.Set("X-Trace", "abc-123")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, "abc-123", rec.Header().Get("X-Trace"))
	require.Contains(t, rec.Body.String(), `"request_id":"abc-123"`)

	r = httptest.NewRequest(http.MethodGet, "/v1/workspaces", nil)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Len(t, rec.Header().Get("X-Trace"), 36, "a fresh UUIDv4")
}

func TestAuthTokensNeverLoggedOrEchoed(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, err := New(Config{Tokens: testTokens(), Logger: log})
	require.NoError(t, err)
	h, err := g.Mount("", testRoutes())
	require.NoError(t, err)
	var bodies bytes.Buffer
	for _, tok := range []string{"wrong-token-XYZZY", tokenFor(route.Admin), tokenFor(all)} {
		for _, target := range []string{"/v1/audit", "/v1/workspaces"} {
			r := httptest.NewRequest(http.MethodGet, target, nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			bodies.Write(rec.Body.Bytes())
			for _, vs := range rec.Header() {
				bodies.WriteString(strings.Join(vs, " "))
			}
		}
	}
	require.Contains(t, logs.String(), "request refused", "refusals are logged")
	require.Contains(t, bodies.String(), "lacks scope")
	for _, tok := range []string{"wrong-token-XYZZY", tokenFor(route.Admin), tokenFor(all)} {
		require.NotContains(t, logs.String(), tok)
		require.NotContains(t, bodies.String(), tok)
		require.NotContains(t, logs.String(), hashOf(tok))
		require.NotContains(t, bodies.String(), hashOf(tok))
	}
}

func TestAuthNewRejectsBadHash(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Tokens: []Token{{Name: "t", SHA256: "nothex", Scopes: []route.Scope{route.Read}}}})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "nothex")
}

func TestAuthCheckExposure(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	require.NoError(t, CheckExposure(0, true, false, log))
	require.NoError(t, CheckExposure(1, false, false, log))
	require.ErrorIs(t, CheckExposure(0, false, false, log), ErrExposed)
	require.Empty(t, logs.String())
	require.NoError(t, CheckExposure(0, false, true, log))
	require.Contains(t, logs.String(), "level=WARN")
	require.Contains(t, logs.String(), "insecureNoAuth")
}
