package rest_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/rest"
)

// TestBadInput sends every workspace route malformed or out-of-range input.
// Each is answered 4xx with its reason before anything is written: the
// workspaces table and the audit log are unchanged.
func TestBadInput(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	ws := create(t, u, b, `{"name":"target","description":"d","volume_metadata":{"size_bytes":9}}`)
	id := ws.ID

	long := strings.Repeat("n", 129)
	desc4097 := `"` + strings.Repeat("d", 4097) + `"`
	// Just over 1 MiB of otherwise valid JSON.
	huge := strings.Repeat("x", 1<<20)
	const (
		parseCreate   = "Unable to parse new workspace parameters from request"
		invalidCreate = "New workspace parameters not valid"
		parseDesc     = "Unable to parse new workspace description from request"
		parseMeta     = "Unable to parse new workspace volume metadata from request"
		invalidMeta   = "New workspace volume metadata not valid"
		listFailed    = "Failed to list workspaces"
	)
	renameMsg := func(name string) string { return "Failed to update workspace " + id + " name to '" + name + "'" }

	for _, tc := range []struct {
		name   string
		method string
		path   string // after /v1/workspaces
		body   string
		status int
		reason string
		msg    string // exact message when the spec fixes it
	}{
		// POST /v1/workspaces
		{"CreateNameWithSpace", "POST", "", `{"name":"two words"}`, 400, "invalid_name", invalidCreate},
		{"CreateNameWithDot", "POST", "", `{"name":"a.b"}`, 400, "invalid_name", invalidCreate},
		{"CreateNameNonASCII", "POST", "", `{"name":"café"}`, 400, "invalid_name", invalidCreate},
		{"CreateNameEmpty", "POST", "", `{"name":""}`, 400, "invalid_name", invalidCreate},
		{"CreateName129", "POST", "", `{"name":"` + long + `"}`, 400, "invalid_name", invalidCreate},
		{"CreateDescription4097", "POST", "", `{"name":"ok","description":` + desc4097 + `}`, 400, "invalid_parameters", invalidCreate},
		{"CreateSizeBytesZero", "POST", "", `{"name":"ok","volume_metadata":{"size_bytes":0}}`, 400, "invalid_parameters", invalidCreate},
		{"CreateSizeBytesNegative", "POST", "", `{"name":"ok","volume_metadata":{"size_bytes":-1}}`, 400, "invalid_parameters", invalidCreate},
		{"CreateMalformedJSON", "POST", "", `{"name":`, 400, "invalid_json", parseCreate},
		{"CreateNotJSON", "POST", "", `name=ok`, 400, "invalid_json", parseCreate},
		{"CreateNameWrongType", "POST", "", `{"name":5}`, 400, "invalid_json", parseCreate},
		{"CreateSizeBytesWrongType", "POST", "", `{"name":"ok","volume_metadata":{"size_bytes":"1"}}`, 400, "invalid_json", parseCreate},
		{"CreateSizeBytesFraction", "POST", "", `{"name":"ok","volume_metadata":{"size_bytes":1.5}}`, 400, "invalid_json", parseCreate},
		{"CreateMetadataWrongType", "POST", "", `{"name":"ok","volume_metadata":[]}`, 400, "invalid_json", parseCreate},
		{"CreateArrayBody", "POST", "", `[{"name":"ok"}]`, 400, "invalid_json", parseCreate},
		{"CreateEmptyBody", "POST", "", ``, 400, "invalid_json", parseCreate},
		{"CreateWhitespaceBody", "POST", "", " \n", 400, "invalid_json", parseCreate},
		{"CreateBodyTooLarge", "POST", "", `{"name":"ok","description":"` + huge + `"}`, 413, "body_too_large", parseCreate},

		// PUT /v1/workspaces/{id}/name
		{"RenameNameWithSpace", "PUT", "/" + id + "/name?name=" + url.QueryEscape("two words"), ``, 400, "invalid_name", renameMsg("two words")},
		{"RenameNameWithSlash", "PUT", "/" + id + "/name?name=" + url.QueryEscape("a/b"), ``, 400, "invalid_name", renameMsg("a/b")},
		{"RenameName129", "PUT", "/" + id + "/name?name=" + long, ``, 400, "invalid_name", renameMsg(long)},
		{"RenameNameMissing", "PUT", "/" + id + "/name", ``, 400, "invalid_query", "Query parameter 'name' is required"},
		{"RenameNameEmpty", "PUT", "/" + id + "/name?name=", ``, 400, "invalid_query", "Query parameter 'name' is required"},
		{"RenameNameInBodyOnly", "PUT", "/" + id + "/name", `{"name":"fromBody"}`, 400, "invalid_query", "Query parameter 'name' is required"},

		// PUT /v1/workspaces/{id}/description
		{"DescribeTooLong", "PUT", "/" + id + "/description", `{"description":` + desc4097 + `}`, 400, "invalid_parameters", ""},
		{"DescribeMalformedJSON", "PUT", "/" + id + "/description", `{"description"`, 400, "invalid_json", parseDesc},
		{"DescribeWrongType", "PUT", "/" + id + "/description", `{"description":5}`, 400, "invalid_json", parseDesc},
		{"DescribeEmptyBody", "PUT", "/" + id + "/description", ``, 400, "invalid_json", parseDesc},
		{"DescribeBodyTooLarge", "PUT", "/" + id + "/description", `{"description":"` + huge + `"}`, 413, "body_too_large", parseDesc},

		// PUT /v1/workspaces/{id}/volume-metadata
		{"MetadataSizeBytesZero", "PUT", "/" + id + "/volume-metadata", `{"volume_metadata":{"size_bytes":0}}`, 400, "invalid_parameters", invalidMeta},
		{"MetadataSizeBytesNegative", "PUT", "/" + id + "/volume-metadata", `{"volume_metadata":{"size_bytes":-5}}`, 400, "invalid_parameters", invalidMeta},
		{"MetadataMalformedJSON", "PUT", "/" + id + "/volume-metadata", `{`, 400, "invalid_json", parseMeta},
		{"MetadataWrongType", "PUT", "/" + id + "/volume-metadata", `{"volume_metadata":"big"}`, 400, "invalid_json", parseMeta},
		{"MetadataSizeBytesWrongType", "PUT", "/" + id + "/volume-metadata", `{"volume_metadata":{"size_bytes":"1"}}`, 400, "invalid_json", parseMeta},
		{"MetadataEmptyBody", "PUT", "/" + id + "/volume-metadata", ``, 400, "invalid_json", parseMeta},
		{"MetadataBodyTooLarge", "PUT", "/" + id + "/volume-metadata", `{"volume_metadata":{},"pad":"` + huge + `"}`, 413, "body_too_large", parseMeta},

		// GET /v1/workspaces
		{"ListVolumeStateUnknown", "GET", "?volume_state=BOGUS", ``, 400, "invalid_query", listFailed},
		{"ListVolumeStateLowercase", "GET", "?volume_state=ready", ``, 400, "invalid_query", listFailed},
		{"ListVolumeStateEmpty", "GET", "?volume_state=", ``, 400, "invalid_query", listFailed},
		{"ListVolumeStateOneBadOfTwo", "GET", "?volume_state=NONE&volume_state=GONE", ``, 400, "invalid_query", listFailed},
		{"ListOffsetNegative", "GET", "?offset=-1", ``, 400, "invalid_query", ""},
		{"ListOffsetNotInteger", "GET", "?offset=abc", ``, 400, "invalid_query", "Query parameter 'offset' must be an integer"},
		{"ListOffsetFraction", "GET", "?offset=1.5&limit=1", ``, 400, "invalid_query", "Query parameter 'offset' must be an integer"},
		{"ListOffsetEmpty", "GET", "?offset=", ``, 400, "invalid_query", "Query parameter 'offset' must be an integer"},
		{"ListLimitZero", "GET", "?limit=0", ``, 400, "invalid_query", ""},
		{"ListLimitNegative", "GET", "?limit=-1", ``, 400, "invalid_query", ""},
		{"ListLimit1001", "GET", "?limit=1001", ``, 400, "invalid_query", ""},
		{"ListLimitNotInteger", "GET", "?limit=x", ``, 400, "invalid_query", "Query parameter 'limit' must be an integer"},
		{"ListLimitHuge", "GET", "?limit=99999999999999999999", ``, 400, "invalid_query", ""},
		{"ListNameInvalid", "GET", "?name=" + url.QueryEscape("a b"), ``, 400, "invalid_name", listFailed},
		{"ListName129", "GET", "?name=" + long, ``, 400, "invalid_name", listFailed},
	} {
		t.Run("Err/"+tc.name, func(t *testing.T) {
			rows, events := b.snapshot(t, "workspaces"), b.count(t, "audit_system_events")
			count := b.count(t, "workspaces")

			r := do(t, tc.method, u+"/v1/workspaces"+tc.path, tc.body)

			e := fails(t, r, tc.status, tc.reason)
			if tc.msg != "" {
				require.Equal(t, tc.msg, e.Message)
			}
			require.NotContains(t, e.Detail, huge[:64], "the body is not echoed back")
			require.Equal(t, count, b.count(t, "workspaces"))
			require.Equal(t, events, b.count(t, "audit_system_events"))
			require.Equal(t, rows, b.snapshot(t, "workspaces"), "nothing changed")
		})
	}

	got, _ := get(t, u, b, id)
	require.Equal(t, ws.raw, got.raw)
	require.Equal(t, []string{"NEW_WORKSPACE"}, b.auditTypes(t, id))
}

// TestDatabaseFailure breaks the schema under a running server: a database
// error is 500 internal with the detail "database error" and nothing of
// the SQL, and the transaction leaves no half-written workspace.
func TestDatabaseFailure(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	b.exec(t, `ALTER TABLE audit_system_events RENAME TO audit_moved`)

	r := do(t, http.MethodPost, u+"/v1/workspaces", `{"name":"orphan"}`)

	e := fails(t, r, http.StatusInternalServerError, "internal")
	require.Equal(t, "Failed to define new workspace 'orphan'", e.Message)
	require.Equal(t, "database error", e.Detail)
	require.NotContains(t, string(r.body), "audit")
	require.Equal(t, 0, b.count(t, "workspaces"), "the insert rolled back with the failed audit write")
}

// TestReadyFailure closes the service's database pool: readiness answers
// 500 not_ready naming the database.
func TestReadyFailure(t *testing.T) {
	t.Parallel()
	u, b := setup(t, rest.Config{})
	r := do(t, http.MethodGet, u+"/liveness/ready", "")
	ok(t, r)
	require.Contains(t, string(r.body), readyPayload)
	b.store.Close()

	e := fails(t, do(t, http.MethodGet, u+"/liveness/ready", ""), http.StatusInternalServerError, "not_ready")

	require.Equal(t, "not ready", e.Message)
	require.Equal(t, "database", e.Detail)
	bare(t, do(t, http.MethodGet, u+"/liveness/alive", ""))
}
