package mcp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/mcp"
	"github.com/cairn-dev/cairn/server/rest"
)

const toolsList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// TestMount checks the routing beside REST: the endpoint exists under the
// prefix only when enabled; every other path keeps REST's behaviour.
func TestMount(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	api := rest.New(h.svc, rest.Config{}).Routes()
	enabled := serve(t, authtest.Mount(t, "/api/", api, mcp.Routes(h.svc, mcp.Config{Enable: true})))
	disabled := serve(t, authtest.Mount(t, "/api", api, mcp.Routes(h.svc, mcp.Config{Enable: false})))
	root := serve(t, authtest.Mount(t, "/", api, mcp.Routes(h.svc, mcp.Config{Enable: true})))

	send := func(t *testing.T, method, url, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := noRedirect.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	t.Run("OKEnabled", func(t *testing.T) {
		status, body := post(t, enabled+"/api/v1/mcp", toolsList)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		status, body = post(t, root+"/v1/mcp", toolsList)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
	})

	t.Run("ErrNotFoundWhenDisabled", func(t *testing.T) {
		status, body := send(t, http.MethodPost, disabled+"/api/v1/mcp", toolsList)
		require.Equal(t, http.StatusNotFound, status)
		require.Equal(t, "404 page not found\n", body)
	})

	t.Run("OKRESTUntouched", func(t *testing.T) {
		for _, url := range []string{enabled, disabled} {
			status, body := send(t, http.MethodGet, url+"/api/v1/workspaces", "")
			require.Equal(t, http.StatusOK, status, "body: %s", body)
			status, _ = send(t, http.MethodDelete, url+"/api/v1/workspaces", "")
			require.Equal(t, http.StatusMethodNotAllowed, status)
			status, _ = send(t, http.MethodGet, url+"/api/v1/nope", "")
			require.Equal(t, http.StatusNotFound, status)
		}
	})

	t.Run("ErrOtherPaths", func(t *testing.T) {
		status, _ := send(t, http.MethodPost, enabled+"/v1/mcp", toolsList)
		require.Equal(t, http.StatusNotFound, status, "the prefix applies")
		status, _ = send(t, http.MethodPost, enabled+"/api/v1/mcp/", toolsList)
		require.Equal(t, http.StatusNotFound, status, "no trailing slash")
		status, _ = send(t, http.MethodPost, enabled+"/api/v1//mcp", toolsList)
		require.Equal(t, http.StatusMovedPermanently, status, "REST cleans the path")
	})
}

// noRedirect reports redirects instead of following them.
var noRedirect = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}
