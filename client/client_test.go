package client_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// dropping is a server that closes the connection of the first request of
// each method without an answer, then answers a workspace; it counts what
// it saw.
type dropping struct {
	mu   sync.Mutex
	seen map[string]int
}

func (d *dropping) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.seen[r.Method]++
	first := d.seen[r.Method] == 1
	d.mu.Unlock()
	if first {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"success":true,"request_id":"r","workspace":{"id":"w","name":"n"},"mount_count":-1}`)
}

func (d *dropping) count(method string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.seen[method]
}

func TestRetriesOnlyIdempotentRequests(t *testing.T) {
	t.Parallel()
	d := &dropping{seen: map[string]int{}}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	require.NoError(t, err)
	ctx := t.Context()

	got, err := c.InspectWorkspace(ctx, "w")
	require.NoError(t, err, "a GET is sent again after the connection dropped")
	require.Equal(t, "n", got.Workspace.Name)
	require.Equal(t, 2, d.count(http.MethodGet))

	_, err = c.RenameWorkspace(ctx, "w", "n")
	require.NoError(t, err, "so is a rename")
	require.Equal(t, 2, d.count(http.MethodPut))

	_, err = c.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "n"})
	require.True(t, client.IsUnreachable(err), "%v", err)
	require.Equal(t, 1, d.count(http.MethodPost), "a POST is never sent twice")
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	c, err := client.New("http://" + addr)
	require.NoError(t, err)

	_, err = c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
	require.True(t, client.IsUnreachable(err), "%v", err)
	_, isCairn := err.(*cairn.Error)
	require.False(t, isCairn, "nobody answered, so it is no *cairn.Error")
	require.Contains(t, err.Error(), "GET /v1/workspaces")
}

// pager serves GET /v1/workspaces with total rows, as the server pages.
type pager struct {
	total int
	mu    sync.Mutex
	asked []string
}

func (p *pager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p.mu.Lock()
	p.asked = append(p.asked, q.Get("offset")+"+"+q.Get("limit"))
	p.mu.Unlock()
	offset, _ := strconv.Atoi(q.Get("offset"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	var rows []cairn.Workspace
	for i := offset; i < min(offset+limit, p.total); i++ {
		rows = append(rows, cairn.Workspace{ID: strconv.Itoa(i), Name: q.Get("name")})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"success": true, "request_id": "r", "workspaces": rows})
}

func TestListsPageTransparently(t *testing.T) {
	t.Parallel()
	p := &pager{total: 2005}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	require.NoError(t, err)

	list, err := c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{Names: []string{"x"}})
	require.NoError(t, err)
	require.Len(t, list, 2005, "past the server's unpaged limit too")
	require.Equal(t, "2004", list[2004].ID)
	require.Equal(t, "x", list[0].Name, "the filter goes with every page")
	require.Equal(t, []string{"0+1000", "1000+1000", "2000+1000"}, p.asked)

	p.asked = nil
	n := 0
	for ws, err := range c.Workspaces(t.Context(), cairn.WorkspaceFilter{Page: cairn.Page{Offset: 10}}) {
		require.NoError(t, err)
		require.Equal(t, strconv.Itoa(10+n), ws.ID)
		if n++; n == 1500 {
			break
		}
	}
	require.Equal(t, []string{"10+1000", "1010+1000"}, p.asked, "rows as they come; no page past the break")

	p.asked = nil
	list, err = c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{Page: cairn.Page{Offset: 5, Limit: 3}})
	require.NoError(t, err)
	require.Len(t, list, 3)
	require.Equal(t, []string{"5+3"}, p.asked, "an explicit page is one request")
}

func TestAuthenticationErrors(t *testing.T) {
	t.Parallel()
	b := newBackend(t)
	url := b.remote(t)
	ctx := t.Context()

	wrong := newClient(t, url, client.WithToken("not-a-token"))
	_, err := wrong.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
	ce := requireReason(t, err, cairn.ReasonUnauthenticated)
	require.Equal(t, http.StatusUnauthorized, ce.Status)
	require.Equal(t, "Authentication required", ce.Message)
	require.NotEmpty(t, ce.RequestID)
	require.NotContains(t, err.Error(), "not-a-token")

	reader := newClient(t, url, client.WithToken(readToken))
	_, err = reader.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
	require.NoError(t, err)
	_, err = reader.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "nope"})
	ce = requireReason(t, err, cairn.ReasonForbidden)
	require.Equal(t, http.StatusForbidden, ce.Status)
	require.Equal(t, "Token 'reader' lacks scope 'write'", ce.Message)

	prefixed := newClient(t, url+"/nowhere")
	_, err = prefixed.FindWorkspaces(ctx, cairn.WorkspaceFilter{})
	ce = requireReason(t, err, "")
	require.Equal(t, http.StatusNotFound, ce.Status, "an unknown route has no envelope: the status tells")
}

func TestTimeoutIsUnreachable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	c, err := client.New(srv.URL, client.WithTimeout(50*time.Millisecond))
	require.NoError(t, err)
	_, err = c.InspectWorkspace(t.Context(), "w")
	require.True(t, client.IsUnreachable(err), "%v", err)
	require.ErrorContains(t, err, "no answer within 50ms")
}

func TestAnswerTooLarge(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"success":true,"request_id":"r","workspaces":[`)
		row := `{"id":"` + strings.Repeat("x", 1<<20) + `"},`
		for range 17 {
			fmt.Fprint(w, row)
		}
		fmt.Fprint(w, `{}]}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	require.NoError(t, err)
	_, err = c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{})
	_ = requireReason(t, err, cairn.ReasonInternal) // the reason is the point
	require.False(t, client.IsUnreachable(err))
	require.ErrorContains(t, err, "larger than")
}

func TestArtifactName(t *testing.T) {
	t.Parallel()
	for path, want := range map[string]string{
		"report.tar.gz": "report_tar_gz", "/tmp/dir/notes": "notes", "a b+c": "a_b_c", "é.txt": "___txt",
		"/": "", ".": "", strings.Repeat("x", 200): strings.Repeat("x", 128),
	} {
		require.Equal(t, want, client.ArtifactName(path), path)
	}
}
