package auth

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/route"
)

// mountDiscovery mounts the test routes, GET /v1/info (any valid token) and
// the guard's discovery routes under prefix.
func mountDiscovery(t *testing.T, cfg Config, prefix string) (*Guard, http.Handler) {
	t.Helper()
	g, err := New(cfg)
	require.NoError(t, err)
	routes := append(testRoutes(), route.Route{Method: http.MethodGet, Path: "/v1/info", Scope: route.Any, Handler: ok})
	routes = append(routes, g.DiscoveryRoutes()...)
	h, err := g.Mount(prefix, routes)
	require.NoError(t, err)
	return g, h
}

// serveURL sends method target (an absolute URL: its host is the Host
// header, an https one comes over TLS) with the given headers.
func serveURL(h http.Handler, method, target string, header map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// The document's fixed fields, after resource and authorization_servers.
const docTail = `"scopes_supported":["read","write","admin","shell","mcp"],"bearer_methods_supported":["header"],"resource_name":"cairn"}` + "\n"

func TestDiscoveryDocument(t *testing.T) {
	t.Parallel()

	t.Run("DerivedFromTheRequest", func(t *testing.T) {
		t.Parallel()
		g, h := mountDiscovery(t, Config{Tokens: testTokens(), Discovery: &Discovery{Path: "/v1/mcp"}}, "")
		var paths []string
		for _, rt := range g.DiscoveryRoutes() {
			require.Equal(t, route.Public, rt.Scope)
			paths = append(paths, rt.String())
		}
		require.Equal(t, []string{"GET /.well-known/oauth-protected-resource", "GET /.well-known/oauth-protected-resource/v1/mcp"}, paths)
		for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/v1/mcp"} {
			// Public although tokens are configured: no Authorization header.
			rec := serveURL(h, http.MethodGet, "http://cairn.test:8080"+path, map[string]string{"X-Request-ID": "prm-1"})
			require.Equal(t, http.StatusOK, rec.Code, path)
			require.Equal(t, `{"resource":"http://cairn.test:8080/v1/mcp",`+docTail, rec.Body.String(), path)
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			require.Equal(t, "prm-1", rec.Header().Get("X-Request-ID"))
			require.Equal(t, "Host", rec.Header().Get("Vary"))
			require.Empty(t, rec.Header().Get("WWW-Authenticate"))
		}
		rec := serveURL(h, http.MethodGet, "https://cairn.example/.well-known/oauth-protected-resource/v1/mcp", nil)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, `{"resource":"https://cairn.example/v1/mcp",`+docTail, rec.Body.String(), "https on a TLS connection")

		require.Equal(t, http.StatusNotFound, serveURL(h, http.MethodGet, "http://cairn.test/.well-known/oauth-protected-resource/v1/other", nil).Code)
		rec = serveURL(h, http.MethodPost, "http://cairn.test/.well-known/oauth-protected-resource", nil)
		require.Equal(t, http.StatusMethodNotAllowed, rec.Code, "GET only")
		require.Contains(t, rec.Header().Get("Allow"), http.MethodGet)
	})

	t.Run("AtTheRootUnderAPrefix", func(t *testing.T) {
		t.Parallel()
		_, h := mountDiscovery(t, Config{Tokens: testTokens(), Discovery: &Discovery{Path: "/cairn/v1/mcp"}}, "/cairn/")
		for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/cairn/v1/mcp"} {
			rec := serveURL(h, http.MethodGet, "http://cairn.test"+path, nil)
			require.Equal(t, http.StatusOK, rec.Code, path)
			require.Equal(t, `{"resource":"http://cairn.test/cairn/v1/mcp",`+docTail, rec.Body.String(), path)
		}
		for _, path := range []string{"/cairn/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/v1/mcp"} {
			require.Equal(t, http.StatusNotFound, serveURL(h, http.MethodGet, "http://cairn.test"+path, nil).Code, path)
		}
		// Every other route stays under the prefix.
		require.Equal(t, http.StatusUnauthorized, serveURL(h, http.MethodPost, "http://cairn.test/cairn/v1/mcp", nil).Code)
		require.Equal(t, http.StatusNotFound, serveURL(h, http.MethodPost, "http://cairn.test/v1/mcp", nil).Code)
	})

	t.Run("Configured", func(t *testing.T) {
		t.Parallel()
		g, h := mountDiscovery(t, Config{Tokens: testTokens(), Discovery: &Discovery{
			Path: "/v1/mcp", Resource: "https://cairn.example/mcp",
			AuthorizationServers: []string{"https://id.example", "https://login.example/tenant-1"},
		}}, "")
		require.Len(t, g.DiscoveryRoutes(), 2)
		want := `{"resource":"https://cairn.example/mcp","authorization_servers":["https://id.example","https://login.example/tenant-1"],` + docTail
		for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
			rec := serveURL(h, http.MethodGet, "http://10.0.0.7:44123"+path, nil)
			require.Equal(t, http.StatusOK, rec.Code, path)
			require.Equal(t, want, rec.Body.String(), "the configured resource, whatever the Host")
			require.Empty(t, rec.Header().Get("Vary"))
		}
		require.Equal(t, http.StatusNotFound, serveURL(h, http.MethodGet, "http://10.0.0.7/.well-known/oauth-protected-resource/v1/mcp", nil).Code,
			"the inserted path is the configured resource's")
	})

	t.Run("ConfiguredWithoutAPath", func(t *testing.T) {
		t.Parallel()
		g, h := mountDiscovery(t, Config{Discovery: &Discovery{Path: "/v1/mcp", Resource: "https://mcp.example"}}, "")
		require.Len(t, g.DiscoveryRoutes(), 1, "the inserted form is the root form")
		rec := serveURL(h, http.MethodGet, "http://localhost/.well-known/oauth-protected-resource", nil)
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, `{"resource":"https://mcp.example",`+docTail, rec.Body.String())
	})

	t.Run("Off", func(t *testing.T) {
		t.Parallel()
		g, h := mountDiscovery(t, Config{Tokens: testTokens()}, "")
		require.Nil(t, g.DiscoveryRoutes())
		require.Equal(t, http.StatusNotFound, serveURL(h, http.MethodGet, "http://cairn.test/.well-known/oauth-protected-resource", nil).Code)
	})

	t.Run("BehindTheGuards", func(t *testing.T) {
		t.Parallel()
		_, h := mountDiscovery(t, Config{Tokens: testTokens(), HostGuard: true, AllowedOrigins: []string{"https://ops.example"},
			Discovery: &Discovery{Path: "/v1/mcp"}}, "")
		const path = "/.well-known/oauth-protected-resource/v1/mcp"
		rec := serveURL(h, http.MethodGet, "http://cairn.test"+path, map[string]string{"Origin": "https://evil.example"})
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, "origin_not_allowed", decode(t, rec).Error.Reason)
		require.Empty(t, rec.Header().Get("WWW-Authenticate"))

		rec = serveURL(h, http.MethodGet, "http://cairn.test"+path, map[string]string{"Origin": "https://ops.example"})
		require.Equal(t, http.StatusOK, rec.Code)
		require.Equal(t, "https://ops.example", rec.Header().Get("Access-Control-Allow-Origin"))

		r := withLocalAddr(httptest.NewRequest(http.MethodGet, "http://rebound.example"+path, nil), "127.0.0.1:44123")
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		require.Equal(t, http.StatusForbidden, rec.Code)
		require.Equal(t, "host_not_allowed", decode(t, rec).Error.Reason)
	})
}

func TestDiscoveryChallenges(t *testing.T) {
	t.Parallel()
	const derivedPRM = "http://cairn.test/.well-known/oauth-protected-resource/v1/mcp"
	for name, tc := range map[string]struct {
		discovery *Discovery
		prm       string // "" when discovery is off
	}{
		"Derived":    {&Discovery{Path: "/v1/mcp"}, derivedPRM},
		"Configured": {&Discovery{Path: "/v1/mcp", Resource: "https://cairn.example/mcp"}, "https://cairn.example/.well-known/oauth-protected-resource/mcp"},
		"Off":        {nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, h := mountDiscovery(t, Config{Tokens: testTokens(), Discovery: tc.discovery}, "")
			metadata := ""
			if tc.prm != "" {
				metadata = `, resource_metadata="` + tc.prm + `"`
			}
			send := func(method, path, token string) *httptest.ResponseRecorder {
				header := map[string]string{"X-Request-ID": "req-1"}
				if token != "" {
					header["Authorization"] = "Bearer " + token
				}
				return serveURL(h, method, "http://cairn.test"+path, header)
			}

			for _, c := range []struct{ method, path, challenge string }{
				{http.MethodPost, "/v1/mcp", `Bearer realm="cairn", scope="mcp"` + metadata},
				{http.MethodGet, "/v1/workspaces", `Bearer realm="cairn", scope="read"` + metadata},
				{http.MethodDelete, "/v1/workspaces/w1", `Bearer realm="cairn", scope="admin"` + metadata},
				{http.MethodGet, "/v1/info", `Bearer realm="cairn"` + metadata},
			} {
				for _, token := range []string{"", "not-a-configured-token"} {
					rec := send(c.method, c.path, token)
					require.Equal(t, http.StatusUnauthorized, rec.Code, c.path)
					require.Equal(t, []string{c.challenge}, rec.Header().Values("WWW-Authenticate"), c.path)
					require.Equal(t, `{"success":false,"request_id":"req-1","error":{"code":401,"message":"Authentication required","reason":"unauthenticated"}}`+"\n",
						rec.Body.String(), "the envelope is unchanged")
					require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
					require.Equal(t, "req-1", rec.Header().Get("X-Request-ID"))
				}
			}

			for _, c := range []struct {
				method, path string
				scope        route.Scope
			}{{http.MethodPost, "/v1/mcp", route.MCP}, {http.MethodGet, "/v1/audit", route.Admin}} {
				rec := send(c.method, c.path, tokenFor(c.scope))
				require.Equal(t, http.StatusForbidden, rec.Code, c.path)
				require.Equal(t, []string{`Bearer realm="cairn", error="insufficient_scope", scope="` + string(c.scope) + `"` + metadata},
					rec.Header().Values("WWW-Authenticate"), c.path)
				require.Equal(t, `{"success":false,"request_id":"req-1","error":{"code":403,"message":"Token 'no-`+string(c.scope)+
					`' lacks scope '`+string(c.scope)+`'","reason":"forbidden"}}`+"\n", rec.Body.String())
			}

			rec := send(http.MethodPost, "/v1/mcp", tokenFor(all))
			require.Equal(t, http.StatusOK, rec.Code)
			require.Empty(t, rec.Header().Get("WWW-Authenticate"))
		})
	}

	t.Run("UnderAPrefix", func(t *testing.T) {
		t.Parallel()
		_, h := mountDiscovery(t, Config{Tokens: testTokens(), Discovery: &Discovery{Path: "/cairn/v1/mcp"}}, "/cairn")
		rec := serveURL(h, http.MethodPost, "https://cairn.example:8443/cairn/v1/mcp", nil)
		require.Equal(t, http.StatusUnauthorized, rec.Code)
		require.Equal(t, `Bearer realm="cairn", scope="mcp", resource_metadata="https://cairn.example:8443/.well-known/oauth-protected-resource/cairn/v1/mcp"`,
			rec.Header().Get("WWW-Authenticate"))
	})
}

func TestDiscoveryConfig(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"https://cairn.example/v1/mcp", "http://127.0.0.1:44123/v1/mcp", "https://cairn.example", "https://cairn.example/",
		"https://[::1]:8443/cairn/v1/mcp", "https://cairn.example/a-b_c.d~e/mcp",
	} {
		require.NoError(t, CheckResource(s), s)
	}
	for _, s := range []string{
		"", "cairn.example/v1/mcp", "/v1/mcp", "ftp://cairn.example/v1/mcp", "HTTPS://cairn.example/v1/mcp", "https:///v1/mcp",
		"https://cairn.example/v1/mcp?x=1", "https://cairn.example/v1/mcp#top", "https://cairn.example/v1/mcp?",
		"https://user@cairn.example/v1/mcp", "https://cairn.example:0/v1/mcp", "https://cairn.example:99999/v1/mcp",
		"https://cairn.example/v1/mcp/", "https://cairn.example//mcp", "https://cairn.example/v1/../mcp",
		"https://cairn.example/v1/./mcp", "https://cairn.example/v1/m%20cp", "https://cairn.example/v1/m cp",
		`https://cairn.example/v1/"mcp"`, "https://cairn.example/{mcp}",
	} {
		require.Error(t, CheckResource(s), s)
	}
	for _, s := range []string{"https://id.example", "https://login.example/tenant-1/v2.0", "http://localhost:8080/realms/cairn"} {
		require.NoError(t, CheckIssuer(s), s)
	}
	for _, s := range []string{"", "id.example", "https://id.example?tenant=1", "https://id.example/#", "mailto:id@example.com",
		"https://user:pw@id.example", "https://id.example/a b"} {
		require.Error(t, CheckIssuer(s), s)
	}

	for name, d := range map[string]*Discovery{
		"RelativePath": {Path: "v1/mcp"},
		"BadResource":  {Path: "/v1/mcp", Resource: "cairn.example/v1/mcp"},
		"BadIssuer":    {Path: "/v1/mcp", AuthorizationServers: []string{"https://id.example", "https://id.example/?x"}},
	} {
		_, err := New(Config{Discovery: d})
		require.Error(t, err, name)
	}
	g, err := New(Config{Discovery: &Discovery{Path: "/v1/mcp", Resource: "https://cairn.example/mcp",
		AuthorizationServers: []string{"https://id.example"}}})
	require.NoError(t, err)
	require.True(t, slices.ContainsFunc(g.DiscoveryRoutes(), func(rt route.Route) bool {
		return rt.Path == "/.well-known/oauth-protected-resource/mcp"
	}))
}
