package rest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/s3/s3test"
	"github.com/cairn-dev/cairn/server/service"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// testBundle is what a test needs beside the server under test: the
// database and the engine, to look behind the API's back.
type testBundle struct {
	dbURL string
	db    *pgxpool.Pool  // a second pool on the same database, for counting rows
	store *postgres.DB   // the service's store
	cli   *client.Client // the engine
	app   string         // unique app name; its volumes and containers go at cleanup
}

// setup wires the real service (real Postgres, real Docker, a bucket of
// the real object store) behind the REST front door on a test HTTP server
// and returns its base URL.
func setup(t testing.TB, cfg rest.Config) (string, *testBundle) {
	t.Helper()
	return setupUnder(t, "", cfg)
}

// setupUnder is setup with the routes mounted under prefix.
func setupUnder(t testing.TB, prefix string, cfg rest.Config) (string, *testBundle) {
	t.Helper()
	ctx := t.Context()
	dbURL := stacktest.Database(t)
	cli := stacktest.Docker(t)
	image := stacktest.Image(t)
	app := stacktest.AppName(t)

	store, err := postgres.Open(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(store.Close)
	db, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)
	t.Cleanup(db.Close)

	gw := stacktest.S3(t)
	objects := s3test.Open(t, gw, stacktest.Bucket(t), "")

	svc := service.New(store, docker.New(cli, docker.Config{AppName: app, Image: image, NetworkMode: "host"}), objects,
		service.Config{AppName: app})
	// Pinned as the server pins them, so parallel puts never race deletes.
	require.NoError(t, svc.PinKeyPrefixes(ctx))
	srv := httptest.NewServer(authtest.Mount(t, prefix, rest.New(svc, cfg).Routes()))
	// Registered last, so it runs first: the server stops before the
	// database and the app's volumes go.
	t.Cleanup(srv.Close)
	return srv.URL, &testBundle{dbURL: dbURL, db: db, store: store, cli: cli, app: app}
}

// response is one HTTP answer, read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// noRedirect is a client that reports redirects instead of following them.
var noRedirect = &http.Client{
	Timeout:       2 * time.Minute,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// do sends one request; body "" sends none. hdr holds extra headers as
// name, value pairs.
func do(t testing.TB, method, url, body string, hdr ...string) *response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return send(t, req)
}

// send sends req without following redirects and reads the answer.
func send(t testing.TB, req *http.Request) *response {
	t.Helper()
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return &response{status: resp.StatusCode, header: resp.Header, body: b}
}

// envelope is the body of every REST answer, with the payloads the
// workspace routes merge into it.
type envelope struct {
	Success    bool            `json:"success"`
	RequestID  string          `json:"request_id"`
	Error      *errorInfo      `json:"error"`
	Workspace  json.RawMessage `json:"workspace"`
	Workspaces json.RawMessage `json:"workspaces"`
	MountCount *int            `json:"mount_count"`
}

type errorInfo struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Detail  string `json:"detail"`
	Reason  string `json:"reason"`
}

// workspace is the wire shape of a workspace, pointers where a field may be
// omitted.
type workspace struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Description    *string         `json:"description"`
	VolumeName     string          `json:"volume_name"`
	VolumeState    string          `json:"volume_state"`
	VolumeMetadata *volumeMetadata `json:"volume_metadata"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`

	raw map[string]json.RawMessage // the object as sent, to see omitted keys
}

type volumeMetadata struct {
	SizeBytes *int64 `json:"size_bytes"`
}

var (
	uuidV4    = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	utcMicros = regexp.MustCompile(`^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z"$`)
)

// ok checks a 200 envelope with the request ID in both places and returns it.
func ok(t testing.TB, r *response) *envelope {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	var env envelope
	require.NoError(t, json.Unmarshal(r.body, &env), "body: %s", r.body)
	require.True(t, env.Success)
	require.NotEmpty(t, env.RequestID)
	require.Equal(t, env.RequestID, r.header.Get("X-Request-ID"))
	require.Nil(t, env.Error)
	require.NotContains(t, string(r.body), `"error"`)
	return &env
}

// bare checks a success with no payload: exactly success and request_id.
func bare(t testing.TB, r *response) {
	t.Helper()
	env := ok(t, r)
	want, err := json.Marshal(map[string]any{"success": true, "request_id": env.RequestID})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(r.body))
	require.Equal(t, `{"success":true,"request_id":`+string(mustJSON(t, env.RequestID))+`}`,
		string(bytes.TrimSpace(r.body)))
}

// fails checks an error envelope: status, reason, code, a message, the
// request ID in both places, and no internals in the text. It returns the
// error object.
func fails(t testing.TB, r *response, status int, reason string) *errorInfo {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	var env envelope
	require.NoError(t, json.Unmarshal(r.body, &env), "body: %s", r.body)
	require.False(t, env.Success)
	require.NotEmpty(t, env.RequestID)
	require.Equal(t, env.RequestID, r.header.Get("X-Request-ID"))
	require.NotNil(t, env.Error, "body: %s", r.body)
	require.Equal(t, status, env.Error.Code)
	require.Equal(t, reason, env.Error.Reason, "detail: %s", env.Error.Detail)
	require.NotEmpty(t, env.Error.Message)
	requireNoInternals(t, r.body)
	return env.Error
}

// requireNoInternals checks that an error body carries no SQL, driver or
// Go error-chain text.
func requireNoInternals(t testing.TB, body []byte) {
	t.Helper()
	for _, bad := range []string{"SQLSTATE", "pgx", "pgconn", "duplicate key", "violates",
		"constraint", "ERROR:", "sql:", "workspaces_", "_pkey", "_key", "goroutine", ".go:",
		"context deadline", "*cairn.", "Error response from daemon", "/var/lib/docker"} {
		require.NotContains(t, string(body), bad, "error body leaks internals")
	}
}

// decodeWorkspace decodes one workspace and checks the invariants every
// answer keeps: the ID shape, the volume name, UTC microsecond timestamps.
func decodeWorkspace(t testing.TB, raw json.RawMessage, app string) *workspace {
	t.Helper()
	require.NotEmpty(t, raw, "no workspace in the answer")
	var ws workspace
	require.NoError(t, json.Unmarshal(raw, &ws))
	require.NoError(t, json.Unmarshal(raw, &ws.raw))
	require.Regexp(t, uuidV4, ws.ID)
	require.Equal(t, app+"-"+ws.ID, ws.VolumeName)
	require.Contains(t, []string{"NONE", "READY"}, ws.VolumeState)
	for _, k := range []string{"id", "name", "volume_name", "volume_state", "created_at", "updated_at"} {
		require.Contains(t, ws.raw, k)
	}
	for _, k := range []string{"created_at", "updated_at"} {
		require.Regexp(t, utcMicros, string(ws.raw[k]), k)
	}
	require.Equal(t, time.UTC, ws.CreatedAt.Location())
	require.False(t, ws.UpdatedAt.Before(ws.CreatedAt))
	if d, has := ws.raw["description"]; has {
		require.NotEqual(t, "null", string(d), "a NULL description is omitted, not null")
	}
	if m, has := ws.raw["volume_metadata"]; has {
		require.NotEqual(t, "null", string(m), "NULL volume metadata is omitted, not null")
	}
	if m, has := ws.raw["volume_issue"]; has {
		require.NotEqual(t, "null", string(m), "no issue is omitted, not null")
	}
	return &ws
}

func decodeWorkspaces(t testing.TB, raw json.RawMessage, app string) []*workspace {
	t.Helper()
	var items []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &items))
	list := make([]*workspace, len(items))
	for i, item := range items {
		list[i] = decodeWorkspace(t, item, app)
	}
	return list
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// create makes a workspace through the API and returns it.
func create(t testing.TB, url string, b *testBundle, body string) *workspace {
	t.Helper()
	env := ok(t, do(t, http.MethodPost, url+"/v1/workspaces", body))
	return decodeWorkspace(t, env.Workspace, b.app)
}

// get reads a workspace and its mount count through the API.
func get(t testing.TB, url string, b *testBundle, id string) (*workspace, int) {
	t.Helper()
	env := ok(t, do(t, http.MethodGet, url+"/v1/workspaces/"+id, ""))
	require.NotNil(t, env.MountCount, "mount_count is always present")
	return decodeWorkspace(t, env.Workspace, b.app), *env.MountCount
}

// count returns the number of rows of a table.
func (b *testBundle) count(t testing.TB, table string) int {
	t.Helper()
	var n int
	require.NoError(t, b.db.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
	return n
}

// snapshot returns every row of a table as text, in a stable order.
func (b *testBundle) snapshot(t testing.TB, table string) string {
	t.Helper()
	var s string
	require.NoError(t, b.db.QueryRow(t.Context(),
		"SELECT coalesce(string_agg(x::text, E'\\n' ORDER BY x::text), '') FROM "+table+" x").Scan(&s))
	return s
}

// auditEvent is one row of audit_system_events.
type auditEvent struct {
	ID       string
	Type     string
	Metadata map[string]any
	Actor    *string
}

// audit returns the audit events of a workspace in the order written.
func (b *testBundle) audit(t testing.TB, workspaceID string) []auditEvent {
	t.Helper()
	rows, err := b.db.Query(t.Context(), `SELECT id, type, metadata, actor,
		created_at = updated_at FROM audit_system_events
		WHERE metadata->>'workspace_id' = $1 ORDER BY created_at, id`, workspaceID)
	require.NoError(t, err)
	defer rows.Close()
	var list []auditEvent
	for rows.Next() {
		var ev auditEvent
		var same bool
		require.NoError(t, rows.Scan(&ev.ID, &ev.Type, &ev.Metadata, &ev.Actor, &same))
		require.Len(t, ev.ID, 26, "audit IDs are ULIDs")
		require.True(t, same, "audit rows have updated_at = created_at")
		require.Nil(t, ev.Actor, "no actor without authentication")
		rid, _ := ev.Metadata["request_id"].(string)
		require.NotEmpty(t, rid, "a mutation through a request records its request ID")
		delete(ev.Metadata, "request_id") // the callers compare the per-type fields
		list = append(list, ev)
	}
	require.NoError(t, rows.Err())
	return list
}

// auditTypes returns the types of a workspace's audit events, in order.
func (b *testBundle) auditTypes(t testing.TB, workspaceID string) []string {
	t.Helper()
	var types []string
	for _, ev := range b.audit(t, workspaceID) {
		types = append(types, ev.Type)
	}
	return types
}

// exec runs SQL on the test database, behind the API's back.
func (b *testBundle) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := b.db.Exec(t.Context(), sql, args...)
	require.NoError(t, err)
}

// keys returns the keys of a JSON object.
func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// strings128 is a valid name of the maximum length.
func strings128() string { return strings.Repeat("n", 128) }

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
