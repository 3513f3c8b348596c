package rest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/rest"
	"github.com/cairn-dev/cairn/server/s3/s3test"
	"github.com/cairn-dev/cairn/server/service"
)

// artConfig varies the artifact harness; the zero value is the shared
// gateway, a bucket of the test's own and the default limits.
type artConfig struct {
	maxObjectSize int64     // 0: the service default (1 GiB)
	gw            *stack.S3 // nil: the shared gateway
	bucket        string    // with gw: a bucket that exists on it
}

// artHarness is the REST server wired like setup's, plus what the artifact
// tests need to look behind the API's back: the bucket and a client of the
// store.
type artHarness struct {
	url    string
	b      *testBundle
	gw     *stack.S3
	bucket string
	sdk    *awss3.Client
}

// setupArtifacts is setup (main_test.go) with a configurable object store
// and service limits.
func setupArtifacts(t testing.TB, cfg artConfig) *artHarness {
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

	gw, bucket := cfg.gw, cfg.bucket
	if gw == nil {
		gw, bucket = stacktest.S3(t), stacktest.Bucket(t)
	}
	objects := s3test.Open(t, gw, bucket, "")

	svc := service.New(store, docker.New(cli, docker.Config{AppName: app, Image: image, NetworkMode: "host"}),
		objects, service.Config{AppName: app, MaxObjectSize: cfg.maxObjectSize})
	// Pinned as the server pins them, so parallel puts never race deletes.
	require.NoError(t, svc.PinKeyPrefixes(ctx))
	srv := httptest.NewServer(authtest.Mount(t, "", rest.New(svc, rest.Config{}).Routes()))
	t.Cleanup(srv.Close)
	return &artHarness{
		url:    srv.URL,
		b:      &testBundle{dbURL: dbURL, db: db, store: store, cli: cli, app: app},
		gw:     gw,
		bucket: bucket,
		// One attempt: a test that looks at a stopped store must not wait
		// for the SDK's retries.
		sdk: gw.Client(func(o *awss3.Options) {
			o.RetryMaxAttempts = 1
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		}),
	}
}

var (
	ulidRe      = regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
	ulidPattern = `[0-7][0-9A-HJKMNP-TV-Z]{25}`
)

// artifact is the wire shape of an artifact.
type artifact struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	ObjectKey   string    `json:"object_key"`
	MIMEType    string    `json:"mime_type"`
	Size        int64     `json:"size"`
	State       string    `json:"state"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`

	raw map[string]json.RawMessage
}

// staging is the wire shape of a staging bundle.
type staging struct {
	Key       string    `json:"staging_object_key"`
	PutURL    string    `json:"put_url"`
	ExpiresAt time.Time `json:"expires_at"`

	raw map[string]json.RawMessage
}

// artEnvelope holds the payloads the artifact routes merge into the
// envelope, and the envelope's keys as sent.
type artEnvelope struct {
	Artifact  json.RawMessage `json:"artifact"`
	Artifacts json.RawMessage `json:"artifacts"`
	Staging   json.RawMessage `json:"staging"`
	GetURL    *string         `json:"get_url"`

	raw map[string]json.RawMessage
}

// okArt checks a 200 envelope (ok) and decodes the artifact payloads.
func (h *artHarness) okArt(t testing.TB, r *response) *artEnvelope {
	t.Helper()
	ok(t, r)
	var env artEnvelope
	require.NoError(t, json.Unmarshal(r.body, &env))
	require.NoError(t, json.Unmarshal(r.body, &env.raw))
	return &env
}

// failsArt is fails with the extra checks of an artifact route: besides
// SQL and Go internals, no bucket, store endpoint, credentials or
// presigned URL in the body. (fails' own list refuses "_key", which the
// legitimate detail "staging_object_key is required" contains, so this
// repeats its checks without that one.)
func (h *artHarness) failsArt(t testing.TB, r *response, status int, reason string) *errorInfo {
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
	h.requireClean(t, r.body)
	return env.Error
}

// internalsRe matches Postgres constraint and index names.
var internalsRe = regexp.MustCompile(`\b(artifacts|workspaces|released_objects|audit_system_events)_\w*(key|idx|fkey)\b`)

// requireClean checks that a body carries no SQL, driver, Go or SDK error
// text, and none of the store's bucket, endpoint, keys or presigned URLs.
func (h *artHarness) requireClean(t testing.TB, body []byte) {
	t.Helper()
	s := string(body)
	for _, bad := range []string{"SQLSTATE", "pgx", "pgconn", "duplicate key", "violates",
		"constraint", "ERROR:", "sql:", "_pkey", "goroutine", ".go:", "context deadline",
		"context canceled", "*cairn.", "operation error", "api error", "StatusCode:",
		"RequestID:", "connection refused", "dial tcp", "http://", "https://", "X-Amz-",
		"x-amz-", "127.0.0.1", h.gw.Endpoint, h.bucket, h.gw.AccessKey, h.gw.SecretKey,
		"released_objects", "audit_system_events"} {
		require.NotContains(t, s, bad, "error body leaks internals")
	}
	require.NotRegexp(t, internalsRe, s, "error body leaks a constraint name")
}

// newWorkspace creates a workspace with a fresh name and returns its ID.
func (h *artHarness) newWorkspace(t testing.TB) string {
	t.Helper()
	name := "ws-" + strings.ToLower(ulid.Make().String())
	return create(t, h.url, h.b, `{"name":"`+name+`"}`).ID
}

func sha256B64(body []byte) string {
	d := sha256.Sum256(body)
	return base64.StdEncoding.EncodeToString(d[:])
}

// mintBody is the new-staging request for body.
func mintBody(body []byte) string {
	return sprintf(`{"size":%d,"sha256_b64":%q}`, len(body), sha256B64(body))
}

// mint asks for a staging upload of body and checks the bundle's shape.
func (h *artHarness) mint(t testing.TB, ws string, body []byte) *staging {
	t.Helper()
	return h.mintRaw(t, ws, mintBody(body))
}

func (h *artHarness) mintRaw(t testing.TB, ws, reqBody string) *staging {
	t.Helper()
	env := h.okArt(t, do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/new-staging", reqBody))
	require.NotEmpty(t, env.Staging, "no staging bundle in the answer")
	var st staging
	require.NoError(t, json.Unmarshal(env.Staging, &st))
	require.NoError(t, json.Unmarshal(env.Staging, &st.raw))
	require.ElementsMatch(t, []string{"staging_object_key", "put_url", "expires_at"}, keys(st.raw))
	require.Regexp(t, `^store/`+regexp.QuoteMeta(ws)+`/`+ulidPattern+`$`, st.Key)
	require.Regexp(t, utcMicros, string(st.raw["expires_at"]))
	return &st
}

// put uploads body to a presigned PUT URL with plain net/http, as clients
// do: the checksum header unless empty, a literal Content-Length (an empty
// body for none, never chunked), and the extra headers as name, value
// pairs. It returns the store's status and answer.
func put(t testing.TB, rawURL string, body []byte, checksum string, hdr ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, rawURL, bytes.NewReader(body))
	require.NoError(t, err)
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body = http.NoBody
	}
	if checksum != "" {
		req.Header.Set("x-amz-checksum-sha256", checksum)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// fetch GETs a presigned URL with plain net/http.
func fetch(t testing.TB, rawURL string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// stage mints a staging upload of body and uploads it; it returns the key.
func (h *artHarness) stage(t testing.TB, ws string, body []byte) string {
	t.Helper()
	st := h.mint(t, ws, body)
	status, resp := put(t, st.PutURL, body, sha256B64(body))
	require.Equal(t, http.StatusOK, status, resp)
	return st.Key
}

// register posts a register request for a staging key.
func (h *artHarness) register(t testing.TB, ws, key, name string) *response {
	t.Helper()
	return do(t, http.MethodPost, h.url+"/v1/workspaces/"+ws+"/artifacts",
		sprintf(`{"staging_object_key":%q,"name":%q}`, key, name))
}

// upload stages body and registers it under name.
func (h *artHarness) upload(t testing.TB, ws, name string, body []byte) *artifact {
	t.Helper()
	key := h.stage(t, ws, body)
	a := h.artifactOf(t, h.register(t, ws, key, name))
	require.Equal(t, name, a.Name)
	require.Equal(t, int64(len(body)), a.Size)
	return a
}

// replace posts a content replacement.
func (h *artHarness) replace(t testing.TB, id, key string) *response {
	t.Helper()
	return do(t, http.MethodPut, h.url+"/v1/artifacts/"+id+"/content",
		sprintf(`{"staging_object_key":%q}`, key))
}

// artifactOf checks a 200 answer carrying one artifact and decodes it.
func (h *artHarness) artifactOf(t testing.TB, r *response) *artifact {
	t.Helper()
	return decodeArtifact(t, h.okArt(t, r).Artifact)
}

// decodeArtifact decodes one artifact and checks the invariants every
// answer keeps.
func decodeArtifact(t testing.TB, raw json.RawMessage) *artifact {
	t.Helper()
	require.NotEmpty(t, raw, "no artifact in the answer")
	var a artifact
	require.NoError(t, json.Unmarshal(raw, &a))
	require.NoError(t, json.Unmarshal(raw, &a.raw))
	require.ElementsMatch(t, []string{"id", "workspace_id", "name", "description", "object_key",
		"mime_type", "size", "state", "sha256_b64", "created_at", "updated_at"}, keys(a.raw))
	require.Regexp(t, ulidRe, a.ID)
	require.Regexp(t, uuidV4, a.WorkspaceID)
	require.Regexp(t, `^store/`+regexp.QuoteMeta(a.WorkspaceID)+`/`+ulidPattern+`$`, a.ObjectKey)
	require.Contains(t, []string{"RECORDED", "MISSING_OBJECT"}, a.State)
	require.NotEmpty(t, a.MIMEType)
	require.GreaterOrEqual(t, a.Size, int64(0))
	for _, k := range []string{"created_at", "updated_at"} {
		require.Regexp(t, utcMicros, string(a.raw[k]), k)
	}
	require.False(t, a.UpdatedAt.Before(a.CreatedAt))
	return &a
}

func decodeArtifacts(t testing.TB, raw json.RawMessage) []*artifact {
	t.Helper()
	var items []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &items))
	list := make([]*artifact, len(items))
	for i, item := range items {
		list[i] = decodeArtifact(t, item)
	}
	return list
}

// getArtifact reads an artifact through the API; query is appended as is.
func (h *artHarness) getArtifact(t testing.TB, id, query string) (*artifact, *string) {
	t.Helper()
	env := h.okArt(t, do(t, http.MethodGet, h.url+"/v1/artifacts/"+id+query, ""))
	return decodeArtifact(t, env.Artifact), env.GetURL
}

// presign mints a GET URL through the API.
func (h *artHarness) presign(t testing.TB, id string) string {
	t.Helper()
	_, u := h.getArtifact(t, id, "?presign")
	require.NotNil(t, u, "no get_url in a presign answer")
	return *u
}

// head reads an object's Content-Type and size behind the API's back;
// found is false when it does not exist.
func (h *artHarness) head(t testing.TB, key string) (contentType string, size int64, found bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	out, err := h.sdk.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: &h.bucket, Key: &key})
	if _, notFound := errors.AsType[*types.NotFound](err); notFound {
		return "", 0, false
	}
	require.NoError(t, err)
	return aws.ToString(out.ContentType), aws.ToInt64(out.ContentLength), true
}

// objects lists the keys under prefix, sorted.
func (h *artHarness) objects(t testing.TB, prefix string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out []string
	pages := awss3.NewListObjectsV2Paginator(h.sdk, &awss3.ListObjectsV2Input{
		Bucket: &h.bucket, Prefix: aws.String(prefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		require.NoError(t, err)
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key))
		}
	}
	slices.Sort(out)
	return out
}

// putDirect stores body at key with the SDK, bypassing mint.
func (h *artHarness) putDirect(t testing.TB, key string, body []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	_, err := h.sdk.PutObject(ctx, &awss3.PutObjectInput{Bucket: &h.bucket, Key: &key,
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
	require.NoError(t, err)
}

// rows counts a workspace's artifact rows behind the API's back.
func (h *artHarness) rows(t testing.TB, ws string) int {
	t.Helper()
	var n int
	require.NoError(t, h.b.db.QueryRow(t.Context(),
		`SELECT count(*) FROM artifacts WHERE workspace_id = $1`, ws).Scan(&n))
	return n
}

// released returns a workspace's released object keys, sorted.
func (h *artHarness) released(t testing.TB, ws string) []string {
	t.Helper()
	rows, err := h.b.db.Query(t.Context(),
		`SELECT object_key FROM released_objects WHERE workspace_id = $1 ORDER BY object_key`, ws)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var k string
		require.NoError(t, rows.Scan(&k))
		out = append(out, k)
	}
	require.NoError(t, rows.Err())
	return out
}

// setMissing flags an artifact MISSING_OBJECT behind the API's back, as
// the reconciler would.
func (h *artHarness) setMissing(t testing.TB, id string) {
	t.Helper()
	h.b.exec(t, `UPDATE artifacts SET state = 'MISSING_OBJECT' WHERE id = $1`, id)
}

// query returns one query parameter of a URL.
func query(t testing.TB, rawURL, name string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	return u.Query().Get(name)
}

// newULID returns a key suffix the server never issued.
func newULID() string { return ulid.Make().String() }
