package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/service"
)

// listBundle is a REST server whose lists run on the real service and
// Postgres (lists need neither Docker nor the object store), and a pool
// for changes behind the API's back.
type listBundle struct {
	url string
	db  *pgxpool.Pool
}

// setupLists serves the routes over the service, passed through wrap when
// it is not nil.
func setupLists(t *testing.T, wrap func(*service.Service) rest.Services) *listBundle {
	t.Helper()
	dsn := stacktest.Database(t)
	store, err := postgres.Open(t.Context(), dsn)
	require.NoError(t, err)
	t.Cleanup(store.Close)
	db, err := pgxpool.New(t.Context(), dsn)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	svc := service.New(store, nil, nil, service.Config{})
	var api rest.Services = svc
	if wrap != nil {
		api = wrap(svc)
	}
	srv := httptest.NewServer(authtest.Mount(t, "", rest.New(api, rest.Config{}).Routes()))
	t.Cleanup(srv.Close)
	return &listBundle{url: srv.URL, db: db}
}

func (b *listBundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	_, err := b.db.Exec(context.Background(), sql, args...)
	require.NoError(t, err)
}

// workspace creates a workspace behind the API and returns its ID.
func (b *listBundle) workspace(t *testing.T, name string) string {
	t.Helper()
	id := uuid.NewString()
	b.exec(t, `INSERT INTO workspaces (id, name, volume_name, created_at, updated_at)
		VALUES ($1, $2, 'cairn-' || $1, now(), now())`, id, name)
	return id
}

// artifact creates a RECORDED artifact behind the API and returns its ID.
func (b *listBundle) artifact(t *testing.T, ws, name string) string {
	t.Helper()
	id := ulid.Make().String()
	b.exec(t, `INSERT INTO artifacts (id, workspace_id, name, object_key, mime_type, size,
		content_written_at, created_at, updated_at)
		VALUES ($1, $2, $3, 'store/' || $2 || '/' || $1, 'text/plain', 1, now(), now(), now())`, id, ws, name)
	return id
}

// list GETs path with If-None-Match set to inm when not empty.
func (b *listBundle) list(t *testing.T, path, inm string) *response {
	t.Helper()
	if inm == "" {
		return do(t, http.MethodGet, b.url+path, "")
	}
	return do(t, http.MethodGet, b.url+path, "", "If-None-Match", inm)
}

// fresh requires a 200 with a weak tag and returns the tag and the rows as
// sent (the envelope without its request ID).
func fresh(t *testing.T, r *response) (tag, rows string) {
	t.Helper()
	ok(t, r)
	tag = r.header.Get("ETag")
	require.Regexp(t, `^W/"\d+-[0-9a-f]{16}"$`, tag)
	var top map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(r.body, &top))
	delete(top, "request_id")
	b, err := json.Marshal(top)
	require.NoError(t, err)
	return tag, string(b)
}

// notModified requires a 304 carrying tag, the request ID and no body.
func notModified(t *testing.T, r *response, tag string) {
	t.Helper()
	require.Equal(t, http.StatusNotModified, r.status, "body: %s", r.body)
	require.Empty(t, r.body)
	require.Equal(t, tag, r.header.Get("ETag"))
	require.NotEmpty(t, r.header.Get("X-Request-ID"))
}

func TestListETag(t *testing.T) {
	t.Parallel()
	b := setupLists(t, nil)
	ws := b.workspace(t, "alpha")
	b.artifact(t, ws, "first")
	artifacts := "/v1/workspaces/" + ws + "/artifacts?limit=1000"

	for _, path := range []string{"/v1/workspaces", artifacts} {
		t.Run("NotModified"+strings.Split(path, "?")[0], func(t *testing.T) {
			tag, rows := fresh(t, b.list(t, path, ""))
			notModified(t, b.list(t, path, tag), tag)
			again, same := fresh(t, b.list(t, path, `W/"0-0000000000000000"`))
			require.Equal(t, tag, again, "an unchanged list keeps its tag")
			require.Equal(t, rows, same)
		})
	}

	t.Run("Comparison", func(t *testing.T) {
		tag, _ := fresh(t, b.list(t, artifacts, ""))
		strong := strings.TrimPrefix(tag, "W/")
		for _, inm := range []string{strong, `"nope", ` + tag, ` W/"a" ,,` + strong + `, "b"`, "*"} {
			notModified(t, b.list(t, artifacts, inm), tag)
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, b.url+artifacts, nil)
		require.NoError(t, err)
		req.Header.Add("If-None-Match", `"nope"`)
		req.Header.Add("If-None-Match", tag)
		notModified(t, send(t, req), tag)
		for _, inm := range []string{`W/"nope"`, strings.Trim(strong, `"`), `garbage, ` + tag, `W/` + strong[:len(strong)-1]} {
			got, _ := fresh(t, b.list(t, artifacts, inm))
			require.Equal(t, tag, got, "If-None-Match %s", inm)
		}
	})

	t.Run("QueryInTheTag", func(t *testing.T) {
		base := "/v1/workspaces/" + ws + "/artifacts"
		tags := map[string]string{}
		for _, q := range []string{"", "?limit=1000", "?limit=10", "?offset=1", "?name=first", "?name=other",
			"?state=MISSING_OBJECT", "?state=RECORDED&state=MISSING_OBJECT"} {
			tag, _ := fresh(t, b.list(t, base+q, ""))
			require.NotContains(t, tags, tag, "%s has the tag of %s", q, tags[tag])
			tags[tag] = q
			for other, otherQ := range tags {
				if otherQ != q {
					fresh(t, b.list(t, base+q, other)) // another query's tag is no match
				}
			}
		}
		sets, _ := fresh(t, b.list(t, base+"?state=MISSING_OBJECT&state=RECORDED&state=RECORDED", ""))
		notModified(t, b.list(t, base+"?state=RECORDED&state=MISSING_OBJECT", sets), sets)
		other := b.workspace(t, "beta")
		fresh(t, b.list(t, "/v1/workspaces/"+other+"/artifacts", tagOf(t, b, base)))
		vols, _ := fresh(t, b.list(t, "/v1/workspaces?volume_state=NONE", ""))
		fresh(t, b.list(t, "/v1/workspaces?volume_state=READY", vols))
	})

	t.Run("ErrorsComeFirst", func(t *testing.T) {
		tag := tagOf(t, b, artifacts)
		fails(t, b.list(t, "/v1/workspaces/"+uuid.NewString()+"/artifacts", "*"), http.StatusNotFound, "workspace_not_found")
		fails(t, b.list(t, "/v1/workspaces/"+uuid.NewString()+"/artifacts?limit=1000", tag), http.StatusNotFound, "workspace_not_found")
		fails(t, b.list(t, artifacts+"&state=GONE", tag), http.StatusBadRequest, "invalid_query")
		fails(t, b.list(t, "/v1/workspaces?limit=0", "*"), http.StatusBadRequest, "invalid_query")
	})
}

func tagOf(t *testing.T, b *listBundle, path string) string {
	t.Helper()
	tag, _ := fresh(t, b.list(t, path, ""))
	return tag
}

// TestListETagMoves makes each kind of change and checks both lists: the
// one it can alter answers 200 with a new tag, the other still 304.
func TestListETagMoves(t *testing.T) {
	t.Parallel()
	b := setupLists(t, nil)
	ws := b.workspace(t, "alpha")
	art := b.artifact(t, ws, "first")
	spare := b.workspace(t, "spare")
	lists := []string{"/v1/workspaces", "/v1/workspaces/" + ws + "/artifacts?state=RECORDED&state=MISSING_OBJECT"}
	tags, rows := make([]string, 2), make([]string, 2)
	for i, path := range lists {
		tags[i], rows[i] = fresh(t, b.list(t, path, ""))
	}

	api := func(method, path, body string) func(t *testing.T) {
		return func(t *testing.T) { ok(t, do(t, method, b.url+path, body)) }
	}
	sql := func(query string, args ...any) func(t *testing.T) {
		return func(t *testing.T) { b.exec(t, query, args...) }
	}
	for _, c := range []struct {
		name                  string
		change                func(t *testing.T)
		workspaces, artifacts bool
	}{
		{"ArtifactInsert", func(t *testing.T) { b.artifact(t, ws, "second") }, true, true},
		{"ArtifactRename", api(http.MethodPut, "/v1/artifacts/"+art+"/name?name=renamed", ""), false, true},
		{"ArtifactDescription", api(http.MethodPut, "/v1/artifacts/"+art+"/description", `{"description":"<b>&"}`), false, true},
		{"ArtifactDescriptionCleared", api(http.MethodPut, "/v1/artifacts/"+art+"/description", `{"description":null}`), false, true},
		{"ArtifactState", sql(`UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1`, art), true, true},
		{"ArtifactChecksum", sql(`UPDATE artifacts SET sha256_b64 = 'x' WHERE id = $1`, art), false, true},
		{"ArtifactDelete", api(http.MethodDelete, "/v1/artifacts/"+art, ""), true, true},
		{"WorkspaceInsert", func(t *testing.T) { b.workspace(t, "gamma") }, true, false},
		{"WorkspaceRename", api(http.MethodPut, "/v1/workspaces/"+ws+"/name?name=omega", ""), true, false},
		{"WorkspaceDescription", api(http.MethodPut, "/v1/workspaces/"+ws+"/description", `{"description":"d"}`), true, false},
		{"WorkspaceVolumeMetadata", api(http.MethodPut, "/v1/workspaces/"+ws+"/volume-metadata",
			`{"volume_metadata":{"size_bytes":5}}`), true, false},
		{"WorkspaceDelete", api(http.MethodDelete, "/v1/workspaces/"+spare, ""), true, false},
	} {
		c.change(t)
		for i, moved := range []bool{c.workspaces, c.artifacts} {
			r := b.list(t, lists[i], tags[i])
			if !moved {
				notModified(t, r, tags[i])
				_, now := fresh(t, b.list(t, lists[i], ""))
				require.Equal(t, rows[i], now, "%s: a 304 promised these rows", c.name)
				continue
			}
			tag, now := fresh(t, r)
			require.NotEqual(t, tags[i], tag, "%s moves %s", c.name, lists[i])
			require.NotEqual(t, rows[i], now, "%s changes %s", c.name, lists[i])
			tags[i], rows[i] = tag, now
		}
	}
}

// racing is the service with a change committed by the next list, just
// before or just after its query: in the window between the version read
// and the list.
type racing struct {
	*service.Service
	after bool
	next  atomic.Pointer[func()]
}

func (r *racing) around(list func()) {
	change := r.next.Swap(nil)
	if change != nil && !r.after {
		(*change)()
	}
	list()
	if change != nil && r.after {
		(*change)()
	}
}

func (r *racing) FindArtifacts(ctx context.Context, f cairn.ArtifactFilter) (list []*cairn.Artifact, err error) {
	r.around(func() { list, err = r.Service.FindArtifacts(ctx, f) })
	return list, err
}

func (r *racing) FindWorkspaces(ctx context.Context, f cairn.WorkspaceFilter) (list []*cairn.Workspace, err error) {
	r.around(func() { list, err = r.Service.FindWorkspaces(ctx, f) })
	return list, err
}

// TestListETagRace commits a change while a list runs. Whichever rows the
// answer holds, its tag must never keep a client on rows without the
// change: the next conditional GET either sends the change or, with a 304,
// vouches for rows that already held it.
func TestListETagRace(t *testing.T) {
	t.Parallel()
	for _, after := range []bool{false, true} {
		name := map[bool]string{false: "ChangeBeforeQuery", true: "ChangeAfterQuery"}[after]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := &racing{after: after}
			b := setupLists(t, func(s *service.Service) rest.Services { r.Service = s; return r })
			ws := b.workspace(t, "alpha")
			for i, path := range []string{"/v1/workspaces/" + ws + "/artifacts", "/v1/workspaces"} {
				racer := sprintf("racer-%d", i)
				change := func() {
					b.artifact(t, ws, racer)
					b.workspace(t, racer)
				}
				r.next.Store(&change)
				tag, rows := fresh(t, b.list(t, path, ""))
				if next := b.list(t, path, tag); next.status != http.StatusNotModified {
					_, rows = fresh(t, next)
				}
				require.Contains(t, rows, `"`+racer+`"`, "%s: the client is left without the change", path)
			}
		})
	}
}
