package rest_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/rest"
)

// requireUnknownRoute checks the standard library's plain 404: no
// envelope and no request ID.
func requireUnknownRoute(t *testing.T, r *response) {
	t.Helper()
	require.Equal(t, http.StatusNotFound, r.status, "body: %s", r.body)
	require.Equal(t, "404 page not found\n", string(r.body))
	require.True(t, strings.HasPrefix(r.header.Get("Content-Type"), "text/plain"), r.header.Get("Content-Type"))
	require.Empty(t, r.header.Values("X-Request-ID"))
}

func TestRouting(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	ws := create(t, u, b, `{"name":"routed"}`)

	t.Run("ErrUnknownPath", func(t *testing.T) {
		for _, p := range []string{"/nope", "/v1", "/v1/", "/v2/workspaces", "/v1/workspace",
			"/v1/workspaces/", "/v1/workspaces/" + ws.ID + "/", "/v1/workspaces/" + ws.ID + "/volume/",
			"/v1/workspaces/" + ws.ID + "/nope", "/liveness", "/liveness/alive/", "/api/v1/workspaces"} {
			requireUnknownRoute(t, do(t, http.MethodGet, u+p, "", "X-Request-ID", "client-id"))
		}
		requireUnknownRoute(t, do(t, http.MethodPost, u+"/v1/workspaces/", `{"name":"slash"}`))
		require.Equal(t, 1, b.count(t, "workspaces"))
	})

	t.Run("ErrWrongMethod", func(t *testing.T) {
		for _, tc := range []struct{ method, path, allow string }{
			{http.MethodPatch, "/v1/workspaces", "GET"},
			{http.MethodDelete, "/v1/workspaces", "POST"},
			{http.MethodPost, "/v1/workspaces/" + ws.ID, "DELETE"},
			{http.MethodGet, "/v1/workspaces/" + ws.ID + "/name", "PUT"},
			{http.MethodPost, "/v1/workspaces/" + ws.ID + "/description", "PUT"},
			{http.MethodGet, "/v1/workspaces/" + ws.ID + "/volume-metadata", "PUT"},
			{http.MethodPut, "/v1/workspaces/" + ws.ID + "/volume", "POST"},
			{http.MethodPost, "/liveness/alive", "GET"},
			{http.MethodDelete, "/liveness/ready", "GET"},
		} {
			r := do(t, tc.method, u+tc.path, "", "X-Request-ID", "client-id")
			require.Equal(t, http.StatusMethodNotAllowed, r.status, "%s %s: %s", tc.method, tc.path, r.body)
			require.Empty(t, r.header.Values("X-Request-ID"), "%s %s", tc.method, tc.path)
			require.NotContains(t, string(r.body), `"success"`)
			require.Contains(t, r.header.Get("Allow"), tc.allow, "%s %s", tc.method, tc.path)
		}
		require.Equal(t, []string{"NEW_WORKSPACE"}, b.auditTypes(t, ws.ID))
	})

	t.Run("OKNonCanonicalRedirects", func(t *testing.T) {
		for p, want := range map[string]string{
			"//v1/workspaces":                    "/v1/workspaces",
			"/v1//workspaces":                    "/v1/workspaces",
			"/v1/./workspaces":                   "/v1/workspaces",
			"/v1/x/../workspaces/" + ws.ID:       "/v1/workspaces/" + ws.ID,
			"/v1/workspaces//" + ws.ID + "/name": "/v1/workspaces/" + ws.ID + "/name",
			"//v1/workspaces?limit=1&name=a":     "/v1/workspaces?limit=1&name=a",
			"/nope//":                            "/nope/",
		} {
			r := do(t, http.MethodGet, u+p, "")
			require.Equal(t, http.StatusMovedPermanently, r.status, "%s: %s", p, r.body)
			require.Equal(t, want, r.header.Get("Location"), p)
			require.Empty(t, r.header.Values("X-Request-ID"), p)
		}
		// Whatever the method: the client repeats a redirected POST itself.
		r := do(t, http.MethodPost, u+"//v1/workspaces", `{"name":"redirected"}`)
		require.Equal(t, http.StatusMovedPermanently, r.status)
		require.Equal(t, "/v1/workspaces", r.header.Get("Location"))
		require.Equal(t, 1, b.count(t, "workspaces"))
	})

	t.Run("OKRequestIDEchoed", func(t *testing.T) {
		for _, id := range []string{"abc-123", "x", strings.Repeat("r", 128), " spaced id ~!@#$%^&*()", `"quoted"\`} {
			r := do(t, http.MethodGet, u+"/v1/workspaces/"+ws.ID, "", "X-Request-ID", id)
			env := ok(t, r)
			require.Equal(t, strings.TrimSpace(id), env.RequestID)
			require.Equal(t, strings.TrimSpace(id), r.header.Get("X-Request-ID"))
		}
		// Errors carry it too.
		r := do(t, http.MethodGet, u+"/v1/workspaces/"+uuid.NewString(), "", "X-Request-ID", "err-id")
		fails(t, r, http.StatusNotFound, "workspace_not_found")
		require.Equal(t, "err-id", r.header.Get("X-Request-ID"))
		r = do(t, http.MethodGet, u+"/v1/workspaces?limit=0", "", "X-Request-ID", "err-id-2")
		fails(t, r, http.StatusBadRequest, "invalid_query")
		require.Equal(t, "err-id-2", r.header.Get("X-Request-ID"))
	})

	// DEL and the other control characters but tab never reach a handler:
	// net/http's server answers such a header 400 itself.
	t.Run("OKRequestIDReplaced", func(t *testing.T) {
		seen := map[string]bool{}
		for name, id := range map[string]string{
			"Absent":      "",
			"TooLong":     strings.Repeat("r", 129),
			"Tab":         "a\tb",
			"NonASCII":    "café",
			"NonASCIIRaw": "a\xffb",
		} {
			var hdr []string
			if id != "" {
				hdr = []string{"X-Request-ID", id}
			}
			r := rawGet(t, u+"/v1/workspaces/"+ws.ID, hdr...)
			require.Equal(t, http.StatusOK, r.status, name)
			env := ok(t, r)
			got := env.RequestID
			require.NotEqual(t, id, got, name)
			parsed, err := uuid.Parse(got)
			require.NoError(t, err, name)
			require.Equal(t, uuid.Version(4), parsed.Version(), name)
			require.Equal(t, parsed.String(), got, "%s: lowercase, hyphenated", name)
			require.Equal(t, got, r.header.Get("X-Request-ID"), name)
			require.False(t, seen[got], "%s: a fresh ID each time", name)
			seen[got] = true
		}
	})

	t.Run("OKLiveness", func(t *testing.T) {
		bare(t, do(t, http.MethodGet, u+"/liveness/alive", ""))
		for p, want := range map[string]string{"/liveness/alive": "", "/liveness/ready": readyPayload} {
			r := do(t, http.MethodGet, u+p, "", "X-Request-ID", "probe-1")
			require.Equal(t, `{"success":true,"request_id":"probe-1"`+want+`}`, strings.TrimSpace(string(r.body)))
			require.Equal(t, "probe-1", r.header.Get("X-Request-ID"))
		}
	})
}

// readyPayload is what a ready answer adds to the bare envelope: the store
// of the test stack checks the bytes itself.
const readyPayload = `,"integrity":"store"`

// TestPathPrefix mounts the routes under /api: they answer there only.
func TestPathPrefix(t *testing.T) {
	t.Parallel()
	u, b := setupUnder(t, "/api/", rest.Config{RequestIDHeader: "X-Trace"})

	t.Run("OKUnderPrefix", func(t *testing.T) {
		r := do(t, http.MethodPost, u+"/api/v1/workspaces", `{"name":"prefixed"}`, "X-Trace", "t-1")
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		require.Equal(t, "t-1", r.header.Get("X-Trace"))
		require.Empty(t, r.header.Values("X-Request-ID"))
		require.Contains(t, string(r.body), `"request_id":"t-1"`)

		r = do(t, http.MethodGet, u+"/api/v1/workspaces?name=prefixed", "")
		require.Equal(t, http.StatusOK, r.status)
		require.Contains(t, string(r.body), `"name":"prefixed"`)
		require.NotEmpty(t, r.header.Get("X-Trace"))
		for p, want := range map[string]string{"/api/liveness/alive": "", "/api/liveness/ready": readyPayload} {
			r = do(t, http.MethodGet, u+p, "", "X-Trace", "probe")
			require.Equal(t, http.StatusOK, r.status)
			require.Equal(t, `{"success":true,"request_id":"probe"`+want+`}`, strings.TrimSpace(string(r.body)))
		}
	})

	t.Run("ErrNotFoundWithoutPrefix", func(t *testing.T) {
		for _, p := range []string{"/v1/workspaces", "/liveness/alive", "/liveness/ready", "/api/", "/api/v1/workspaces/"} {
			r := do(t, http.MethodGet, u+p, "")
			require.Equal(t, http.StatusNotFound, r.status, p)
			require.Equal(t, "404 page not found\n", string(r.body), p)
		}
		requireUnknownRoute(t, do(t, http.MethodPost, u+"/v1/workspaces", `{"name":"unprefixed"}`))
		require.Equal(t, 1, b.count(t, "workspaces"))
	})
}

// rawGet sends a GET over a bare connection, its header lines written
// byte for byte: net/http's client refuses some bytes (DEL, say) that
// another client could still send.
func rawGet(t *testing.T, target string, hdr ...string) *response {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(time.Minute)))
	var req strings.Builder
	req.WriteString("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nConnection: close\r\n")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.WriteString(hdr[i] + ": " + hdr[i+1] + "\r\n")
	}
	req.WriteString("\r\n")
	_, err = io.WriteString(conn, req.String())
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &response{status: resp.StatusCode, header: resp.Header, body: body}
}
