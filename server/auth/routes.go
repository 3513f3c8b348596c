package auth

import (
	"net/http"
	"strings"
)

// Scope is a permission a token carries (API.md §1.6). Scopes are
// independent: admin does not imply read.
type Scope string

// The scopes. ScopeNone marks a route that needs no token (the probes).
const (
	ScopeNone  Scope = ""
	ScopeRead  Scope = "read"
	ScopeWrite Scope = "write"
	ScopeAdmin Scope = "admin"
	ScopeShell Scope = "shell"
	ScopeMCP   Scope = "mcp"
)

// route is one row of the route summary (API.md §3.1): a ServeMux pattern
// relative to the path prefix ("METHOD /path", or "/path" for any method)
// and the scope it needs.
type route struct {
	pattern string
	scope   Scope
}

// mcpRoute is the MCP endpoint, mounted only when MCP is enabled.
var mcpRoute = route{"/v1/mcp", ScopeMCP}

// routes is the one table from route to scope, in the order of §3.1. Where
// the coarse rules overlap, the specific assignment of §1.6 wins.
var routes = []route{
	{"GET /liveness/alive", ScopeNone},
	{"GET /liveness/ready", ScopeNone},
	{"POST /v1/workspaces", ScopeWrite},
	{"GET /v1/workspaces", ScopeRead},
	{"GET /v1/workspaces/{workspaceID}", ScopeRead},
	{"DELETE /v1/workspaces/{workspaceID}", ScopeAdmin},
	{"PUT /v1/workspaces/{workspaceID}/name", ScopeWrite},
	{"PUT /v1/workspaces/{workspaceID}/description", ScopeWrite},
	{"PUT /v1/workspaces/{workspaceID}/volume-metadata", ScopeWrite},
	{"POST /v1/workspaces/{workspaceID}/volume", ScopeAdmin},
	{"DELETE /v1/workspaces/{workspaceID}/volume", ScopeAdmin},
	{"POST /v1/workspaces/{workspaceID}/new-staging", ScopeWrite},
	{"POST /v1/workspaces/{workspaceID}/artifacts", ScopeWrite},
	{"GET /v1/workspaces/{workspaceID}/artifacts", ScopeRead},
	{"POST /v1/workspaces/{workspaceID}/artifact-from-volume", ScopeWrite},
	{"GET /v1/artifacts/{artifactID}", ScopeRead},
	{"DELETE /v1/artifacts/{artifactID}", ScopeWrite},
	{"PUT /v1/artifacts/{artifactID}/name", ScopeWrite},
	{"PUT /v1/artifacts/{artifactID}/description", ScopeWrite},
	{"PUT /v1/artifacts/{artifactID}/content", ScopeWrite},
	{"POST /v1/artifacts/{artifactID}/load-in-volume", ScopeWrite},
	{"POST /v1/artifacts/{artifactID}/update-from-volume", ScopeWrite},
	{"POST /v1/maintenance/sweep", ScopeAdmin},
	{"GET /v1/audit", ScopeAdmin},
	{"GET /v1/events", ScopeRead},
	{"GET /v1/workspaces/{workspaceID}/shell", ScopeShell},
	{"GET /v1/shells", ScopeRead},
	{"DELETE /v1/shells/{shellID}", ScopeAdmin},
}

// matched is the marker a routing mux returns for a known route; any other
// handler (404, 405, redirect) means the request is not ours to judge.
type matched Scope

func (matched) ServeHTTP(http.ResponseWriter, *http.Request) {}

// newRouter builds a mux over the table with prefix in front of every path,
// so that a request matches here exactly when it matches the front doors.
func newRouter(prefix string, withMCP bool) *http.ServeMux {
	prefix = strings.TrimRight(prefix, "/")
	table := routes
	if withMCP {
		table = append(table[:len(table):len(table)], mcpRoute)
	}
	mux := http.NewServeMux()
	for _, rt := range table {
		method, path, ok := strings.Cut(rt.pattern, " ")
		pattern := prefix + rt.pattern
		if ok {
			pattern = method + " " + prefix + path
		}
		mux.Handle(pattern, matched(rt.scope))
	}
	return mux
}

// scopeOf returns the scope the request's route needs, and false when the
// request matches no route of the table.
func scopeOf(mux *http.ServeMux, r *http.Request) (Scope, bool) {
	h, _ := mux.Handler(r)
	m, ok := h.(matched)
	return Scope(m), ok
}

// RouteScope is one row of the route table: a pattern as the REST mux
// registers it ("METHOD /path"), and the scope a token needs for it.
type RouteScope struct {
	Pattern string
	Scope   Scope
}

// Routes returns the route table, the MCP endpoint last ("POST /v1/mcp"
// standing for every method), without the path prefix.
func Routes() []RouteScope {
	out := make([]RouteScope, 0, len(routes)+1)
	for _, r := range routes {
		out = append(out, RouteScope{Pattern: r.pattern, Scope: r.scope})
	}
	return append(out, RouteScope{Pattern: "POST " + mcpRoute.pattern, Scope: mcpRoute.scope})
}
