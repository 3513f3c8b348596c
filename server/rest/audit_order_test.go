package rest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/service"
)

// storeOnly serves the REST routes over the real service on real Postgres
// with no engine and no object store: enough for routes that only read and
// write rows.
func storeOnly(t *testing.T) (string, *postgres.DB) {
	t.Helper()
	store, err := postgres.Open(t.Context(), stacktest.Database(t))
	require.NoError(t, err)
	t.Cleanup(store.Close)
	svc := service.New(store, nil, nil, service.Config{})
	srv := httptest.NewServer(authtest.Mount(t, "", rest.New(svc, rest.Config{}).Routes()))
	t.Cleanup(srv.Close)
	return srv.URL, store
}

type listedEvent struct {
	ID       string         `json:"id"`
	Type     string         `json:"type"`
	Metadata map[string]any `json:"metadata"`
}

func listAuditEvents(t *testing.T, url string) []listedEvent {
	t.Helper()
	r := do(t, "GET", url, "")
	ok(t, r)
	var body struct {
		Events []listedEvent `json:"audit_events"`
	}
	require.NoError(t, json.Unmarshal(r.body, &body))
	return body.Events
}

func eventIDs(list []listedEvent) []string {
	ids := make([]string, len(list))
	for i, ev := range list {
		ids[i] = ev.ID
	}
	return ids
}

// TestListAuditOrder: order=desc lists newest first and pages in that
// order; asc and no order are today's oldest first; anything else is 400.
func TestListAuditOrder(t *testing.T) {
	t.Parallel()
	base, store := storeOnly(t)
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, id := range []string{"A1", "A2", "A3"} {
		require.NoError(t, store.InsertAudit(t.Context(), &cairn.AuditEvent{ID: id, Type: cairn.AuditNewWorkspace,
			Metadata: map[string]any{"workspace_id": "ws-order"}, CreatedAt: at.Add(time.Duration(i) * time.Second)}))
	}
	q := base + "/v1/audit?workspace_id=ws-order"
	require.Equal(t, []string{"A1", "A2", "A3"}, eventIDs(listAuditEvents(t, q)))
	require.Equal(t, []string{"A1", "A2", "A3"}, eventIDs(listAuditEvents(t, q+"&order=asc")))
	require.Equal(t, []string{"A3", "A2", "A1"}, eventIDs(listAuditEvents(t, q+"&order=desc")))
	require.Equal(t, []string{"A3", "A2"}, eventIDs(listAuditEvents(t, q+"&order=desc&limit=2")))
	require.Equal(t, []string{"A1"}, eventIDs(listAuditEvents(t, q+"&order=desc&limit=2&offset=2")))

	for _, bad := range []string{"DESC", "newest", "asc,desc"} {
		e := fails(t, do(t, "GET", q+"&order="+bad, ""), http.StatusBadRequest, "invalid_query")
		require.Contains(t, e.Message, "order")
	}
}

// TestAuditRequestID: a mutation's audit row carries the request ID the
// response names, given by the client or made up by the server.
func TestAuditRequestID(t *testing.T) {
	t.Parallel()
	base, store := storeOnly(t)
	now := cairn.Now()
	id := uuid.NewString()
	require.NoError(t, store.InsertWorkspace(t.Context(), &cairn.Workspace{ID: id, Name: "traced",
		VolumeName: "cairn-" + id, VolumeState: cairn.VolumeNone, CreatedAt: now, UpdatedAt: now}))

	given := ok(t, do(t, "PUT", base+"/v1/workspaces/"+id+"/name?name=traced-2", "", "X-Request-ID", "op-42"))
	require.Equal(t, "op-42", given.RequestID)
	made := ok(t, do(t, "PUT", base+"/v1/workspaces/"+id+"/name?name=traced-3", ""))

	events := listAuditEvents(t, base+"/v1/audit?workspace_id="+id)
	require.Len(t, events, 2)
	require.Equal(t, "RENAME_WORKSPACE", events[0].Type)
	require.Equal(t, "op-42", events[0].Metadata["request_id"])
	require.Equal(t, made.RequestID, events[1].Metadata["request_id"])
	require.Equal(t, "traced-3", events[1].Metadata["new_workspace_name"], "the other keys are kept")
}
