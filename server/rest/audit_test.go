package rest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/rest"
)

func TestListAudit(t *testing.T) {
	t.Parallel()
	base, _ := setup(t, rest.Config{})
	var created struct {
		Workspace struct {
			ID string `json:"id"`
		} `json:"workspace"`
	}
	r := do(t, "POST", base+"/v1/workspaces", `{"name":"audited"}`)
	ok(t, r)
	require.NoError(t, json.Unmarshal(r.body, &created))
	id := created.Workspace.ID
	ok(t, do(t, "PUT", base+"/v1/workspaces/"+id+"/name?name=audited-2", ""))
	ok(t, do(t, "POST", base+"/v1/workspaces", `{"name":"other"}`))

	type event struct {
		Type     string         `json:"type"`
		Actor    *string        `json:"actor"`
		Metadata map[string]any `json:"metadata"`
	}
	list := func(query string) []event {
		r := do(t, "GET", base+"/v1/audit"+query, "")
		ok(t, r)
		var body struct {
			Events *[]event `json:"audit_events"`
		}
		require.NoError(t, json.Unmarshal(r.body, &body))
		require.NotNil(t, body.Events, "the audit_events key is always present")
		return *body.Events
	}

	events := list("?workspace_id=" + id)
	require.Len(t, events, 2)
	require.Equal(t, "NEW_WORKSPACE", events[0].Type)
	require.Equal(t, "RENAME_WORKSPACE", events[1].Type)
	require.Equal(t, "audited-2", events[1].Metadata["new_workspace_name"])
	require.Nil(t, events[0].Actor, "no actor without authentication")

	require.Len(t, list("?type=RENAME_WORKSPACE"), 1)
	require.Len(t, list("?type=NEW_WORKSPACE&limit=1&offset=1"), 1)
	require.Empty(t, list("?workspace_id=nobody"))

	fails(t, do(t, "GET", base+"/v1/audit?type=NOPE", ""), http.StatusBadRequest, "invalid_query")
	fails(t, do(t, "GET", base+"/v1/audit?limit=0", ""), http.StatusBadRequest, "invalid_query")
}
