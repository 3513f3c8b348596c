package auth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/cairn-dev/cairn/server/envelope"
	"github.com/cairn-dev/cairn/server/route"
)

// MCP authorization discovery: the OAuth 2.0 Protected Resource Metadata
// document of RFC 9728 for the MCP endpoint, and the RFC 6750 challenges
// that point a client at it (MCP 2025-11-25, "Authorization").

// MetadataPath is the well-known path of the Protected Resource Metadata
// document (RFC 9728, section 3). For a resource with a path, the
// document's URL inserts this between the host and that path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// wellKnown is the root of the well-known URIs (RFC 8615).
const wellKnown = "/.well-known/"

// resourceName is the document's human-readable resource_name.
const resourceName = "cairn"

// Discovery describes the protected resource — the MCP endpoint — whose
// metadata the guard serves.
type Discovery struct {
	// Path is the resource's path as this server serves it, the API's path
	// prefix included ("/v1/mcp", "/cairn/v1/mcp"): a resource derived
	// from a request is the request's scheme and Host with this path.
	Path string
	// Resource is the resource's canonical URI as clients address it
	// (auth.oauth.resource); "" derives it from each request.
	Resource string
	// AuthorizationServers are the issuer URLs of the authorization
	// servers clients may get tokens from (auth.oauth.authorizationServers).
	AuthorizationServers []string
}

// discovery is a checked Discovery.
type discovery struct {
	path     string   // the served path of a derived resource
	resource *url.URL // the configured resource; nil derives it
	servers  []string
}

func newDiscovery(d *Discovery) (*discovery, error) {
	if d == nil {
		return nil, nil
	}
	if !strings.HasPrefix(d.Path, "/") {
		return nil, fmt.Errorf("discovery: the resource's path must start with /, got %q", d.Path)
	}
	out := &discovery{path: d.Path, servers: d.AuthorizationServers}
	if d.Resource != "" {
		if err := CheckResource(d.Resource); err != nil {
			return nil, fmt.Errorf("discovery: resource: %w", err)
		}
		out.resource, _ = url.Parse(d.Resource)
	}
	for _, s := range d.AuthorizationServers {
		if err := CheckIssuer(s); err != nil {
			return nil, fmt.Errorf("discovery: authorization server: %w", err)
		}
	}
	return out, nil
}

// resourcePath is the path of the resource's URI: the configured
// resource's, or the served one. A bare host's "/" is no path (RFC 9728,
// section 3.1, drops it before inserting the well-known path).
func (d *discovery) resourcePath() string {
	if d.resource != nil {
		return strings.TrimSuffix(d.resource.EscapedPath(), "/")
	}
	return d.path
}

// origin is the scheme and host of the resource for r: the configured
// resource's, or the request's own (https on a TLS connection, http
// otherwise, as on loopback; behind a proxy that ends TLS, configure the
// resource).
func (d *discovery) origin(r *http.Request) string {
	if d.resource != nil {
		return d.resource.Scheme + "://" + d.resource.Host
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		// An HTTP/1.0 request may name no host: the address it came in on.
		if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && addr != nil {
			host = addr.String()
		}
	}
	return scheme + "://" + host
}

// resourceFor is the resource identifier for r.
func (d *discovery) resourceFor(r *http.Request) string {
	if d.resource != nil {
		return d.resource.String()
	}
	return d.origin(r) + d.path
}

// metadataURL is the absolute URL of the resource's metadata document for
// r: the well-known path inserted between its host and its path.
func (d *discovery) metadataURL(r *http.Request) string {
	return d.origin(r) + MetadataPath + d.resourcePath()
}

// metadata is the Protected Resource Metadata document (RFC 9728, section 2).
type metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

// DiscoveryRoutes declares the routes of the resource's metadata document,
// none when discovery is off: GET at the well-known path, and at the
// well-known path with the resource's path inserted (RFC 9728, section
// 3.1), which a client tries first. Both are public, behind the Origin and Host guards
// like every route. Their paths are under /.well-known/, which Mount serves
// at the root of the host, not under the API's prefix.
func (g *Guard) DiscoveryRoutes() []route.Route {
	if g.discovery == nil {
		return nil
	}
	h := http.HandlerFunc(g.serveMetadata)
	routes := []route.Route{{Method: http.MethodGet, Path: MetadataPath, Scope: route.Public, Handler: h}}
	if p := g.discovery.resourcePath(); p != "" {
		routes = append(routes, route.Route{Method: http.MethodGet, Path: MetadataPath + p, Scope: route.Public, Handler: h})
	}
	return routes
}

// serveMetadata answers the metadata document. It is not an envelope: its
// shape is RFC 9728's.
func (g *Guard) serveMetadata(w http.ResponseWriter, r *http.Request) {
	d := g.discovery
	doc := metadata{
		Resource:               d.resourceFor(r),
		AuthorizationServers:   d.servers,
		ScopesSupported:        route.Names(route.TokenScopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           resourceName,
	}
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set(g.idHdr, envelope.RequestID(r.Header.Get(g.idHdr)))
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	// A derived resource follows the Host header.
	if d.resource == nil {
		h.Add("Vary", "Host")
	}
	w.WriteHeader(http.StatusOK)
	w.Write(body.Bytes()) //nolint:errcheck // the client went away
}

// challenge is the WWW-Authenticate value of a refusal by authentication
// (RFC 6750, section 3): realm, then the error code when there is one (a
// token without the route's scope is "insufficient_scope"), the scope the
// route needs (none for route.Any, which any valid token may call) and,
// with discovery on, where the resource's metadata is (RFC 9728, section
// 5.1).
func (g *Guard) challenge(r *http.Request, errCode string, scope route.Scope) string {
	params := []string{`realm="cairn"`}
	if errCode != "" {
		params = append(params, "error="+quote(errCode))
	}
	if scope != route.Any && scope != route.Public {
		params = append(params, "scope="+quote(string(scope)))
	}
	if g.discovery != nil {
		params = append(params, "resource_metadata="+quote(g.discovery.metadataURL(r)))
	}
	return "Bearer " + strings.Join(params, ", ")
}

// quote is s as an RFC 9110 quoted-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// mountPrefix is the prefix a route is mounted under. The API's prefix
// (api.apis.endPoint.pathPrefix) places cairn under a path of a shared
// origin, but a well-known URI exists only at the root of the origin (RFC
// 8615, section 3), and a client builds the metadata URL from the resource
// by inserting the well-known path right after the host (RFC 9728, section
// 3.1): with a prefix of /cairn the document of http://h/cairn/v1/mcp is
// http://h/.well-known/oauth-protected-resource/cairn/v1/mcp. So a route
// under /.well-known/ is mounted at the root, in the same mux and behind
// the same guards as every other route. A second mux in front of Mount's,
// or a second Mount, would have given these routes their own guard and
// CORS table, and taken them out of the one route list the server reports
// and the OpenAPI test checks.
func mountPrefix(prefix string, rt route.Route) string {
	if strings.HasPrefix(rt.Path, wellKnown) {
		return ""
	}
	return prefix
}

// resourceSegment is one segment of a resource's path: RFC 3986 pchar
// without percent-encoding, which a ServeMux pattern would decode.
var resourceSegment = regexp.MustCompile(`^[A-Za-z0-9._~!$&'()*+,;=:@-]+$`)

// CheckResource checks a configured resource identifier: an absolute
// http(s) URL with a host, without user info, query or fragment, written
// as it is escaped, whose path, if any, has no empty, "." or ".." segment
// and no trailing slash.
func CheckResource(s string) error {
	u, err := checkHTTPURL(s)
	if err != nil {
		return err
	}
	p := strings.TrimPrefix(u.Path, "/")
	if p == "" {
		return nil
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." || !resourceSegment.MatchString(seg) {
			return fmt.Errorf("must be an absolute http(s) URL whose path has no empty, '.' or '..' segment, "+
				"no trailing slash and no %%-escapes, got %q", s)
		}
	}
	return nil
}

// CheckIssuer checks an authorization server's issuer URL: an absolute
// http(s) URL with a host, without user info, query or fragment.
func CheckIssuer(s string) error {
	_, err := checkHTTPURL(s)
	return err
}

func checkHTTPURL(s string) (*url.URL, error) {
	bad := fmt.Errorf("must be an absolute http(s) URL with a host and no user info, query or fragment, got %q", s)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil ||
		strings.ContainsAny(s, "?#") || u.Opaque != "" {
		return nil, bad
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, bad
		}
	}
	// url.Parse accepts what it would print otherwise (a space, a quote,
	// an uppercase scheme): only a URL written as it prints is taken.
	if u.String() != s {
		return nil, fmt.Errorf("must be an absolute http(s) URL written as it prints (escaped, lowercase scheme), got %q", s)
	}
	return u, nil
}
