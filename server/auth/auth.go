// Package auth is cairn's access control. It builds the one API mux from the
// routes every front door declares (server/route) and puts each behind the
// Origin guard, the Host (DNS-rebinding) guard, bearer-token authentication
// and the route's scope, then names the token as the request's actor.
// Besides cairn's own tokens it accepts OAuth 2.0 access tokens (JWTs) of
// the configured authorization servers (oauth.go). It also serves the MCP
// endpoint's OAuth 2.0 Protected Resource Metadata (RFC 9728), which its
// 401 and 403 challenges point at.
package auth

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/envelope"
	"github.com/cairn-dev/cairn/server/route"
)

// Token is one accepted bearer token: its name (the audit actor), the
// lowercase hex SHA-256 of the token, and its scopes.
type Token struct {
	Name   string
	SHA256 string
	Scopes []route.Scope
}

// MaxBodyBytes bounds every request body on every route but those that
// declare their own (route.Route.MaxBody); a front door may answer a
// larger one itself first, with its own error shape.
const MaxBodyBytes = 1 << 20

// Config holds the decorator's settings.
type Config struct {
	// Tokens are the accepted tokens; none means no authentication (the
	// guards still apply). Whether that is allowed is CheckExposure's call.
	Tokens []Token
	// AllowedOrigins is api.cors.allowedOrigins: a request carrying an
	// Origin header not listed here is refused.
	AllowedOrigins []string
	// HostGuard is api.apis.mcp.enableDNSRebindGuard.
	HostGuard bool
	// RequestIDHeader names the request-ID header; default "X-Request-ID".
	RequestIDHeader string
	Logger          *slog.Logger
	// Discovery is the protected resource (the MCP endpoint) whose OAuth
	// 2.0 Protected Resource Metadata DiscoveryRoutes serves and every
	// challenge points at; nil serves none.
	Discovery *Discovery
	// OAuth turns on the acceptance of OAuth 2.0 access tokens (JWTs)
	// besides Tokens, which are checked first; nil, no issuer or no
	// audience leaves it off. With it on, authentication is on even
	// without Tokens.
	OAuth *OAuth
}

// Guard is the access-control decorator.
type Guard struct {
	tokens  []token
	origins origins
	// routeOrigins are the origins a route admits besides origins, by the
	// route's path under the prefix (the CORS preflight has no route).
	routeOrigins map[string]origins
	hosts        bool
	idHdr        string
	log          *slog.Logger
	discovery    *discovery // nil: off
	oauth        *verifier  // nil: off

	// ephemeral are the tokens registered for the life of a session (an
	// SSH workbench's), keyed by their hash.
	mu        sync.RWMutex
	ephemeral map[[sha256.Size]byte]*token
}

type token struct {
	name   string
	hash   [sha256.Size]byte
	scopes []route.Scope
}

// New checks cfg and returns the decorator.
func New(cfg Config) (*Guard, error) {
	g := &Guard{
		hosts: cfg.HostGuard,
		idHdr: cmp.Or(cfg.RequestIDHeader, "X-Request-ID"),
		log:   cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
	}
	g.origins = newOrigins(cfg.AllowedOrigins)
	d, err := newDiscovery(cfg.Discovery)
	if err != nil {
		return nil, err
	}
	g.discovery = d
	if g.oauth, err = newVerifier(cfg.OAuth, g.log); err != nil {
		return nil, err
	}
	for _, t := range cfg.Tokens {
		raw, err := hex.DecodeString(t.SHA256)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("token %q: sha256 must be 64 hex digits", t.Name)
		}
		g.tokens = append(g.tokens, token{name: t.Name, hash: [sha256.Size]byte(raw), scopes: t.Scopes})
	}
	return g, nil
}

// Mount builds the one API handler from the declared routes, prefix in front
// of every path but a well-known URI's (mountPrefix), each route behind the
// checks its scope calls for. Nothing else is served: a request that
// matches no route is answered here (the mux's plain 404, or a 405 with
// Allow) and a non-canonical path gets a 301.
// Mount refuses a route without a handler or a declared scope, and two
// routes that collide, so a server with such a route cannot start.
func (g *Guard) Mount(prefix string, routes []route.Route) (h http.Handler, err error) {
	if err := route.Check(routes); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	defer func() {
		// ServeMux.Handle panics on patterns that overlap without one being
		// more specific; that is a declaration error like any other.
		if p := recover(); p != nil {
			h, err = nil, fmt.Errorf("routes collide: %v", p)
		}
	}()
	g.routeOrigins = map[string]origins{}
	for _, rt := range routes {
		under := mountPrefix(prefix, rt)
		mux.Handle(rt.Pattern(under), g.protect(rt))
		if len(rt.Origins) > 0 {
			g.routeOrigins[strings.TrimRight(under, "/")+rt.Path] = newOrigins(rt.Origins)
		}
	}
	return g.cors(route.Canonical(mux)), nil
}

// protect applies, in this order, the Origin guard, the Host guard,
// authentication and the route's scope, then bounds the body and hands the
// request on with who is acting in its context.
func (g *Guard) protect(rt route.Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin, r) {
			g.refuse(w, r, "Origin not allowed", cairn.ReasonOriginNotAllowed)
			return
		}
		if g.hosts && onLoopback(r) && !loopbackHost(r.Host) {
			g.refuse(w, r, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), cairn.ReasonHostNotAllowed)
			return
		}
		ctx, ok := g.admit(w, r, rt.Scope)
		if !ok {
			return
		}
		// The body is bounded on the route's own copy of the request: the
		// server reads the original's type to decide how to finish a
		// connection whose body was not read.
		routed := r.WithContext(ctx)
		routed.Body = boundBody(w, r, cmp.Or(rt.MaxBody, MaxBodyBytes))
		rt.Handler.ServeHTTP(w, routed)
	})
}

// boundBody bounds the request body at max. A body declared
// larger is refused before a byte of it is read: its reads fail at once
// with the *http.MaxBytesError each front door answers 413 to, in the
// route's own words, and the answer carries "Connection: close", so that
// the server closes the connection after it — neither draining the body
// first (it would wait, up to the read timeout, for a client that sends
// no more) nor resetting the connection under a client still writing it
// (it half-closes and lingers on a body left unread). The header rather
// than http.MaxBytesReader's own signal to the server, which does not pass
// through a ResponseWriter wrapper such as the metrics recorder.
func boundBody(w http.ResponseWriter, r *http.Request, max int64) io.ReadCloser {
	if r.ContentLength <= max {
		return http.MaxBytesReader(w, r.Body, max)
	}
	w.Header().Set("Connection", "close")
	// One byte that is not the body's trips the limit of a zero-byte
	// reader.
	tripped := http.MaxBytesReader(w, io.NopCloser(strings.NewReader("x")), 0)
	_, _ = tripped.Read(make([]byte, 1))
	return tripped
}

// admit authenticates the request for scope and returns the context the
// route runs with. With authentication off that context says so
// explicitly, since an unmarked context is refused every scope
// (cairn.ScopeAllowed). On refusal it has answered and returns false.
func (g *Guard) admit(w http.ResponseWriter, r *http.Request, scope route.Scope) (context.Context, bool) {
	ctx := r.Context()
	if scope == route.Public {
		return ctx, true
	}
	t, ok := g.authenticate(r)
	if !ok && g.oauth != nil {
		if raw, jwt := g.accessToken(r); jwt {
			var err error
			if t, err = g.oauth.verify(ctx, raw); err != nil {
				g.log.LogAttrs(ctx, slog.LevelDebug, "access token refused", slog.String("error", err.Error()))
				g.challenged(w, r, g.challenge(r, "invalid_token", scope), "Invalid access token", cairn.ReasonUnauthenticated)
				return nil, false
			}
			ok = true
		}
	}
	switch {
	case !ok && len(g.tokens) == 0 && g.oauth == nil:
		// An ephemeral token is held to its scopes even with
		// authentication off; anything else is let through as before.
		return cairn.WithoutAuthentication(ctx), true
	case !ok:
		g.challenged(w, r, g.challenge(r, "", scope), "Authentication required", cairn.ReasonUnauthenticated)
		return nil, false
	}
	if scope != route.Any && !slices.Contains(t.scopes, scope) {
		g.challenged(w, r, g.challenge(r, "insufficient_scope", scope),
			fmt.Sprintf("Token '%s' lacks scope '%s'", t.name, scope), cairn.ReasonForbidden)
		return nil, false
	}
	return cairn.WithScopes(cairn.WithActor(ctx, t.name), route.Names(t.scopes)), true
}

// origins are allowed browser origins, lowercase; one whose port is "*"
// admits its scheme and host on any port.
type origins []string

func newOrigins(list []string) origins {
	o := make(origins, 0, len(list))
	for _, s := range list {
		o = append(o, strings.ToLower(s))
	}
	return o
}

func (o origins) admit(origin string) bool {
	origin = strings.ToLower(origin)
	for _, allowed := range o {
		if allowed == origin {
			return true
		}
		if anyPort, ok := strings.CutSuffix(allowed, ":*"); ok && anyPort == withoutPort(origin) {
			return true
		}
	}
	return false
}

// withoutPort is origin with its port dropped; "" when it is no origin.
func withoutPort(origin string) string {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" {
		return ""
	}
	host := u.Hostname()
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return u.Scheme + "://" + host
}

// originAllowed reports whether the request's origin may call its path.
func (g *Guard) originAllowed(origin string, r *http.Request) bool {
	return g.origins.admit(origin) || g.routeOrigins[r.URL.Path].admit(origin)
}

// cors adds the CORS headers for an allow-listed origin, and answers a
// preflight itself (204). CORS is thereby off unless
// api.cors.allowedOrigins lists origins; no private-network access is ever
// granted.
func (g *Guard) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && g.originAllowed(origin, r) && g.corsPreflight(w, r, origin) {
			return
		}
		next.ServeHTTP(w, r)
	})
}

// compare is the constant-time comparison; a variable so a test can count
// its calls.
var compare = subtle.ConstantTimeCompare

// authenticate finds the request's bearer token. The presented token is
// hashed and compared with every configured hash, without stopping at a
// match, so the time taken says nothing about which hash matched.
func (g *Guard) authenticate(r *http.Request) (*token, bool) {
	presented, ok := bearer(r)
	if !ok {
		return nil, false
	}
	sum := sha256.Sum256([]byte(presented))
	if t, ok := g.ephemeralToken(sum); ok {
		return t, true
	}
	found := -1
	for i := range g.tokens {
		eq := compare(sum[:], g.tokens[i].hash[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	if found < 0 {
		return nil, false
	}
	return &g.tokens[found], true
}

// bearer is the request's bearer token, if it has one.
func bearer(r *http.Request) (string, bool) {
	scheme, presented, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	presented = strings.TrimSpace(presented)
	return presented, presented != ""
}

// accessToken is the request's bearer token when it is to be checked as
// an OAuth access token: one that is no static token (authenticate has
// passed it over) and is longer than MaxAccessTokenBytes, which verify
// refuses unread, or has the shape of a JWS. Any other unknown token is
// refused as before.
func (g *Guard) accessToken(r *http.Request) (string, bool) {
	presented, ok := bearer(r)
	if !ok || (len(presented) <= MaxAccessTokenBytes && !looksLikeJWS(presented)) {
		return "", false
	}
	return presented, true
}

// refuse answers with the REST error envelope. It logs the refusal at debug
// level without the Authorization header: tokens are never logged.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, message string, reason cairn.Reason) {
	g.challenged(w, r, "", message, reason)
}

// challenged is refuse with a WWW-Authenticate challenge, when challenge
// is not "" (envelope.WriteRefusal would set its own, bare one on a 401;
// the body is the same envelope).
func (g *Guard) challenged(w http.ResponseWriter, r *http.Request, challenge, message string, reason cairn.Reason) {
	id := envelope.RequestID(r.Header.Get(g.idHdr))
	w.Header().Set(g.idHdr, id)
	err := &cairn.Error{Reason: reason}
	if challenge == "" {
		envelope.WriteRefusal(w, id, message, err)
	} else {
		w.Header().Set("WWW-Authenticate", challenge)
		status, _ := reason.HTTPStatus()
		envelope.WriteJSON(w, status, envelope.NewFailure(id, status, message, err))
	}
	g.log.LogAttrs(r.Context(), slog.LevelDebug, "request refused", slog.String("method", r.Method),
		slog.String("path", r.URL.Path), slog.String("reason", string(reason)), slog.String("request_id", id))
}

// onLoopback reports whether the request came in on a loopback local
// address (read from http.LocalAddrContextKey).
func onLoopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || addr == nil {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// loopbackHost reports whether a Host header names this machine only:
// "localhost", a "*.localhost" name or a loopback IP literal, port stripped.
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

// ErrExposed is CheckExposure's refusal.
var ErrExposed = errors.New("no auth.tokens are configured and a listener is not on a loopback address: " +
	"anyone who can reach it could use the API; configure auth.tokens (see `cairn token new`), " +
	"bind every listener to 127.0.0.1, or set auth.insecureNoAuth: true")

// CheckExposure is the start-up rule of authentication: without tokens every
// listener must be on loopback, unless insecureNoAuth, which is logged at
// warn level.
func CheckExposure(tokens int, loopback, insecureNoAuth bool, log *slog.Logger) error {
	if tokens > 0 || loopback {
		return nil
	}
	if !insecureNoAuth {
		return ErrExposed
	}
	log.Warn("authentication is off on a non-loopback listener (auth.insecureNoAuth: true): anyone who can reach it can use the API")
	return nil
}

// corsPreflight adds the CORS headers for an allow-listed origin, and
// answers a preflight itself (204). It reports whether it answered. CORS is
// thereby off unless api.cors.allowedOrigins lists origins; no
// private-network access is ever granted.
func (g *Guard) corsPreflight(w http.ResponseWriter, r *http.Request, origin string) bool {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Expose-Headers", g.idHdr+", Mcp-Session-Id")
	if r.Method != http.MethodOptions || r.Header.Get("Access-Control-Request-Method") == "" {
		return false
	}
	h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, DELETE, OPTIONS")
	h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, "+g.idHdr+
		", Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID")
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true
}
