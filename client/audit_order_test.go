package client_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// TestFindAuditEventsOrder: Newest sends order=desc; without it no order
// is sent, so an older server sees the request it always saw.
func TestFindAuditEventsOrder(t *testing.T) {
	t.Parallel()
	queries := make(chan url.Values, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		queries <- r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"success":true,"request_id":"r","audit_events":[{"id":"E1","type":"NEW_WORKSPACE"}]}`)
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	require.NoError(t, err)

	f := cairn.AuditFilter{WorkspaceID: "w", Newest: true, Page: cairn.Page{Limit: 5}}
	list, err := c.FindAuditEvents(t.Context(), f)
	require.NoError(t, err)
	require.Len(t, list, 1)
	q := <-queries
	require.Equal(t, "desc", q.Get("order"))
	require.Equal(t, "w", q.Get("workspace_id"))

	f.Newest = false
	_, err = c.FindAuditEvents(t.Context(), f)
	require.NoError(t, err)
	require.False(t, (<-queries).Has("order"))
}
