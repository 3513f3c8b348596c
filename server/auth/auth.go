// Package auth is cairn's access control (API.md §1.6–§1.7): one decorator
// in front of every front door that applies, on a known route, the Origin
// guard, the Host (DNS-rebinding) guard, bearer-token authentication and the
// route's scope, then names the token as the request's actor.
package auth

import (
	"cmp"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/rest"
)

// Token is one accepted bearer token: its name (the audit actor), the
// lowercase hex SHA-256 of the token, and its scopes.
type Token struct {
	Name   string
	SHA256 string
	Scopes []Scope
}

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
	// PathPrefix is the API's path prefix, as given to the front doors.
	PathPrefix string
	// MCP adds the MCP endpoint to the route table.
	MCP bool
	// RequestIDHeader names the request-ID header; default "X-Request-ID".
	RequestIDHeader string
	Logger          *slog.Logger
}

// Guard is the access-control decorator.
type Guard struct {
	tokens  []token
	origins []string
	hosts   bool
	router  *http.ServeMux
	idHdr   string
	log     *slog.Logger
}

type token struct {
	name   string
	hash   [sha256.Size]byte
	scopes []Scope
}

// New checks cfg and returns the decorator.
func New(cfg Config) (*Guard, error) {
	g := &Guard{
		hosts:  cfg.HostGuard,
		router: newRouter(cfg.PathPrefix, cfg.MCP),
		idHdr:  cmp.Or(cfg.RequestIDHeader, "X-Request-ID"),
		log:    cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
	}
	for _, o := range cfg.AllowedOrigins {
		g.origins = append(g.origins, strings.ToLower(o))
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

// Handler returns next behind the guard. Requests matching no route of the
// table pass untouched (their 404, 405 or redirect comes from next).
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		allowed := origin != "" && slices.Contains(g.origins, strings.ToLower(origin))
		if allowed && g.corsPreflight(w, r, origin) {
			return
		}
		scope, ok := scopeOf(g.router, r)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if origin != "" && !allowed {
			g.refuse(w, r, "Origin not allowed", cairn.ReasonOriginNotAllowed)
			return
		}
		if g.hosts && onLoopback(r) && !loopbackHost(r.Host) {
			g.refuse(w, r, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), cairn.ReasonHostNotAllowed)
			return
		}
		if scope == ScopeNone || len(g.tokens) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		t, ok := g.authenticate(r)
		if !ok {
			g.refuse(w, r, "Authentication required", cairn.ReasonUnauthenticated)
			return
		}
		if !slices.Contains(t.scopes, scope) {
			g.refuse(w, r, fmt.Sprintf("Token '%s' lacks scope '%s'", t.name, scope), cairn.ReasonForbidden)
			return
		}
		ctx := cairn.WithScopes(cairn.WithActor(r.Context(), t.name), scopeNames(t.scopes))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// compare is the constant-time comparison; a variable so a test can count
// its calls.
var compare = subtle.ConstantTimeCompare

// authenticate finds the request's bearer token. The presented token is
// hashed and compared with every configured hash, without stopping at a
// match, so the time taken says nothing about which hash matched.
func (g *Guard) authenticate(r *http.Request) (*token, bool) {
	scheme, presented, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil, false
	}
	presented = strings.TrimSpace(presented)
	if presented == "" {
		return nil, false
	}
	sum := sha256.Sum256([]byte(presented))
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

// refuse answers with the REST error envelope. It logs the refusal at debug
// level without the Authorization header: tokens are never logged.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, message string, reason cairn.Reason) {
	id := rest.RequestID(r.Header.Get(g.idHdr))
	w.Header().Set(g.idHdr, id)
	rest.WriteRefusal(w, id, message, &cairn.Error{Reason: reason})
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

// CheckExposure is the start-up rule of API.md §1.6: without tokens every
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

// scopeNames lists scopes as the domain's context carries them.
func scopeNames(scopes []Scope) []string {
	names := make([]string, len(scopes))
	for i, s := range scopes {
		names[i] = string(s)
	}
	return names
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
