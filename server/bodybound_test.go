package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// A request that declares a body over the bound and then sends one byte of
// it is answered without the server waiting for the rest, on every route
// of the document, by the real server process with and without
// authentication, and the connection is closed after the answer. A route
// that reads a body answers 413 body_too_large in its own words, unless it
// refused the request before reading (a reason the route documents); a
// route without a body answers as it would. (Before, a route that read the
// body answered only after the read timeout: the server tried to drain the
// declared body first.)
func TestDeclaredOversizeBodyIsNotAwaited(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	for _, noAuth := range []bool{false, true} {
		t.Run(fmt.Sprintf("noAuth=%v", noAuth), func(t *testing.T) {
			t.Parallel()
			srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true, NoAuth: noAuth})
			for key, op := range operations(doc) {
				for _, length := range []int64{1<<20 + 1, 256 << 20} {
					start := time.Now()
					status, head, closed := sendDeclaredOversize(t, srv.URL, srv.Token, op.method, op.path, length)
					t.Logf("%s, Content-Length %d: %d in %s", key, length, status, time.Since(start).Round(time.Millisecond))
					require.True(t, closed, "%s: the connection stays open after the answer", key)
					require.Less(t, status, 500, "%s: %s", key, head)
					if op.op.RequestBody == nil || status == http.StatusRequestEntityTooLarge {
						continue
					}
					require.GreaterOrEqual(t, status, 400, "%s took a body it never read: %s", key, head)
					reason := regexp.MustCompile(`"reason":"([a-z_]+)"`).FindStringSubmatch(head)
					require.NotNil(t, reason, "%s: %s", key, head)
					require.Contains(t, opReasons(t, key, op.op), reason[1], "%s refused before reading with a reason it does not document", key)
				}
			}
			for _, key := range []string{"POST /v1/workspaces", "POST /v1/mcp"} {
				op := operations(doc)[key]
				status, head, _ := sendDeclaredOversize(t, srv.URL, srv.Token, op.method, op.path, 256<<20)
				require.Equal(t, http.StatusRequestEntityTooLarge, status, "%s: %s", key, head)
				require.Contains(t, head, "body_too_large", key)
			}
		})
	}
}

// sendDeclaredOversize sends method path with a declared Content-Length
// and one byte of body, then waits — at most well under the server's read
// timeout — for the answer's status line and for the server to close.
func sendDeclaredOversize(t *testing.T, base, token, method, path string, length int64) (status int, head string, closed bool) {
	t.Helper()
	u, err := url.Parse(base)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(20*time.Second)))
	path = regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, "01JZZZZZZZZZZZZZZZZZZZZZZZ")
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", method, path, u.Host)
	fmt.Fprintf(&req, "Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n", length)
	if token != "" {
		fmt.Fprintf(&req, "Authorization: Bearer %s\r\n", token)
	}
	req.WriteString("\r\n{")
	_, err = io.WriteString(conn, req.String())
	require.NoError(t, err)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	require.NoError(t, err, "%s %s: no answer while the body was awaited", method, path)
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	_, err = r.ReadByte()
	return resp.StatusCode, resp.Status + " " + string(body), err == io.EOF
}
