// Package route declares cairn's routes. Every front door (REST, MCP, the
// events and shell websockets) lists its routes as Route values — method,
// path, the scope a token needs, the handler — and server/auth builds the
// one mux from that list, so a route cannot be served without a declared
// scope.
package route

import (
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
)

// Scope is a permission a token carries. Scopes are independent: admin does
// not imply read.
type Scope string

// The scopes. Public marks a route that needs no token (the liveness
// probes); it must be said, never implied by a missing value. Any marks a
// route every valid token may call, whatever its scopes (what the server
// offers the caller); no token carries it.
const (
	Public Scope = "public"
	Any    Scope = "any"
	Read   Scope = "read"
	Write  Scope = "write"
	Admin  Scope = "admin"
	Shell  Scope = "shell"
	MCP    Scope = "mcp"
)

// TokenScopes are the scopes a token may carry.
var TokenScopes = []Scope{Read, Write, Admin, Shell, MCP}

// Names is scopes as strings.
func Names(scopes []Scope) []string {
	out := make([]string, len(scopes))
	for i, s := range scopes {
		out[i] = string(s)
	}
	return out
}

// Valid reports whether s is one of the declared scopes.
func (s Scope) Valid() bool {
	switch s {
	case Public, Any, Read, Write, Admin, Shell, MCP:
		return true
	}
	return false
}

// Route is one declared route.
type Route struct {
	// Method is the HTTP method; "" answers every method (the MCP endpoint,
	// whose transport picks its own).
	Method string
	// Path is the ServeMux path under the API's prefix, e.g.
	// "/v1/workspaces/{workspaceID}".
	Path    string
	Scope   Scope
	Handler http.Handler
	// MaxBody bounds the route's request body; 0 is the guard's
	// MaxBodyBytes, which bounds every other route.
	MaxBody int64
	// Origins are browser origins admitted to this route besides those
	// every route admits (api.cors.allowedOrigins); an origin's port may
	// be "*", any port.
	Origins []string
}

// Pattern is the ServeMux pattern of r with prefix in front of its path.
func (r Route) Pattern(prefix string) string {
	p := strings.TrimRight(prefix, "/") + r.Path
	if r.Method == "" {
		return p
	}
	return r.Method + " " + p
}

// String names the route as the route summary does ("GET /v1/audit").
func (r Route) String() string { return r.Pattern("") }

// Validate refuses a route that could be served wrongly: no handler, a
// relative path, or a scope that was not declared.
func (r Route) Validate() error {
	switch {
	case r.Handler == nil:
		return fmt.Errorf("route %s: no handler", r)
	case !strings.HasPrefix(r.Path, "/"):
		return fmt.Errorf("route %s: path must start with /", r)
	case !r.Scope.Valid():
		return fmt.Errorf("route %s: scope %q is not declared (one of public, any, read, write, admin, shell, mcp)", r, r.Scope)
	}
	return nil
}

// ErrDuplicate reports two routes with one pattern.
var ErrDuplicate = errors.New("route declared twice")

// Check validates every route and refuses duplicates.
func Check(routes []Route) error {
	seen := make(map[string]bool, len(routes))
	for _, r := range routes {
		if err := r.Validate(); err != nil {
			return err
		}
		if seen[r.String()] {
			return fmt.Errorf("%w: %s", ErrDuplicate, r)
		}
		seen[r.String()] = true
	}
	return nil
}

// Canonical answers a non-canonical path (with "//", "/./" or "/../") with
// a 301 to its cleaned form before next sees it: the standard library's mux
// (Go 1.26) redirects with a 307 instead.
func Canonical(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		clean := path.Clean("/" + p)
		if strings.HasSuffix(p, "/") && clean != "/" {
			clean += "/"
		}
		if r.Method != http.MethodConnect && clean != p {
			if r.URL.RawQuery != "" {
				clean += "?" + r.URL.RawQuery
			}
			w.Header().Set("Location", clean)
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		next.ServeHTTP(w, r)
	})
}
