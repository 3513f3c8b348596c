package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/apiclient"
	"github.com/cairn-dev/cairn/server"
	"github.com/cairn-dev/cairn/server/route"
)

// The OpenAPI document's tests live here, in the server's package, because
// two of them need what only this package's tests build: the route list as
// a real server mounts it (Server.Routes) and a real server to answer.

// openAPIFile is the API's OpenAPI document, from this package.
const openAPIFile = "../docs/openapi.yaml"

// loadOpenAPI loads the document and validates it as OpenAPI 3.1.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromFile(openAPIFile)
	require.NoError(t, err)
	require.True(t, doc.IsOpenAPI31OrLater(), "the document is OpenAPI %s", doc.OpenAPI)
	require.NoError(t, doc.Validate(loader.Context))
	return doc
}

// docOperation is one operation of the document.
type docOperation struct {
	method, path string
	item         *openapi3.PathItem
	op           *openapi3.Operation
}

// operations lists the document's operations, keyed as route.Route.String
// names a route ("GET /v1/workspaces").
func operations(doc *openapi3.T) map[string]docOperation {
	ops := map[string]docOperation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			ops[method+" "+path] = docOperation{method: method, path: path, item: item, op: op}
		}
	}
	return ops
}

// reasonTable is the document's x-cairn-reasons: reason → status.
func reasonTable(t *testing.T, doc *openapi3.T) map[string]int {
	t.Helper()
	raw, ok := doc.Extensions["x-cairn-reasons"].(map[string]any)
	require.True(t, ok, "the document has no x-cairn-reasons map")
	table := make(map[string]int, len(raw))
	for reason, status := range raw {
		table[reason] = asInt(t, status, "x-cairn-reasons."+reason)
	}
	return table
}

func asInt(t *testing.T, v any, what string) int {
	t.Helper()
	f, ok := v.(float64)
	require.True(t, ok && f == float64(int(f)), "%s is %v, not an integer", what, v)
	return int(f)
}

// opReasons is an operation's x-cairn-reasons.
func opReasons(t *testing.T, key string, op *openapi3.Operation) []string {
	t.Helper()
	raw, ok := op.Extensions["x-cairn-reasons"].([]any)
	require.True(t, ok, "%s has no x-cairn-reasons list", key)
	reasons := make([]string, len(raw))
	for i, r := range raw {
		reasons[i], ok = r.(string)
		require.True(t, ok, "%s: x-cairn-reasons holds %v", key, r)
	}
	return reasons
}

// reasonStatus is the status op answers reason with: its override, or the
// table's.
func reasonStatus(t *testing.T, table map[string]int, key string, op *openapi3.Operation, reason string) int {
	t.Helper()
	if overrides, ok := op.Extensions["x-cairn-status-overrides"].(map[string]any); ok {
		if status, ok := overrides[reason]; ok {
			return asInt(t, status, key+" x-cairn-status-overrides."+reason)
		}
	}
	status, ok := table[reason]
	require.True(t, ok, "%s names the reason %q, which is not in the table", key, reason)
	return status
}

// TestOpenAPIReasonTable holds the document's reason table to
// cairn.Reason.HTTPStatus, and each operation's reasons to the responses it
// documents.
func TestOpenAPIReasonTable(t *testing.T) {
	t.Parallel()
	doc := loadOpenAPI(t)
	table := reasonTable(t, doc)
	want := map[string]int{}
	for _, r := range cairn.Reasons() {
		want[string(r)], _ = r.HTTPStatus()
	}
	require.Equal(t, want, table, "x-cairn-reasons must be cairn's reason table")

	enum := doc.Components.Schemas["Reason"].Value.Enum
	require.ElementsMatch(t, slices.Collect(maps.Keys(want)), enum, "the Reason schema's enum")

	for key, d := range operations(doc) {
		checkOperationReasons(t, table, key, d.op)
	}
}

// TestAPIGuideReasonTable holds the reason table of docs/api.md, the
// guide to the API, to cairn's: every reason once, with its status.
func TestAPIGuideReasonTable(t *testing.T) {
	t.Parallel()
	guide, err := os.ReadFile("../docs/api.md")
	require.NoError(t, err)
	row := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| ([0-9]{3}) \\|")
	got := map[string]int{}
	for _, m := range row.FindAllStringSubmatch(string(guide), -1) {
		_, dup := got[m[1]]
		require.False(t, dup, "docs/api.md lists %s twice", m[1])
		got[m[1]], _ = strconv.Atoi(m[2])
	}
	want := map[string]int{}
	for _, r := range cairn.Reasons() {
		want[string(r)], _ = r.HTTPStatus()
	}
	require.Equal(t, want, got, "the reason table of docs/api.md")
}

// checkOperationReasons checks that an operation names only known reasons,
// overrides only reasons it names, answers the guards' refusals, and
// documents exactly the error statuses its reasons have.
func checkOperationReasons(t *testing.T, table map[string]int, key string, op *openapi3.Operation) {
	t.Helper()
	reasons := opReasons(t, key, op)
	require.Len(t, reasons, len(slices.Compact(slices.Sorted(slices.Values(reasons)))), "%s repeats a reason", key)
	guards := []string{string(cairn.ReasonOriginNotAllowed), string(cairn.ReasonHostNotAllowed)}
	switch op.Extensions["x-cairn-scope"] {
	case string(route.Public):
	case string(route.Any): // any valid token: never forbidden
		guards = append(guards, string(cairn.ReasonUnauthenticated))
	default:
		guards = append(guards, string(cairn.ReasonUnauthenticated), string(cairn.ReasonForbidden))
	}
	for _, g := range guards {
		require.Contains(t, reasons, g, "%s: every route behind the guard answers %s", key, g)
	}
	if overrides, ok := op.Extensions["x-cairn-status-overrides"].(map[string]any); ok {
		for reason, status := range overrides {
			require.Contains(t, reasons, reason, "%s overrides the status of a reason it does not answer", key)
			want, own := cairn.Reason(reason).VolumeRouteStatus()
			require.True(t, own, "%s overrides %s, which keeps the table's status on every route", key, reason)
			require.Equal(t, want, asInt(t, status, key+" x-cairn-status-overrides."+reason), "%s: the override of %s", key, reason)
		}
	}
	statuses := map[int]bool{}
	for _, r := range reasons {
		statuses[reasonStatus(t, table, key, op, r)] = true
	}
	documented := map[int]bool{}
	for code := range op.Responses.Map() {
		var status int
		_, err := fmt.Sscan(code, &status)
		require.NoError(t, err, "%s documents the response %q", key, code)
		if status >= http.StatusBadRequest {
			documented[status] = true
		}
	}
	require.Equal(t, statuses, documented, "%s: the error responses must be the statuses of its reasons", key)
}

// TestOpenAPIAgainstARealServer holds the document to a real server: the
// routes it mounts, the answers it gives, and a client generated from it.
func TestOpenAPIAgainstARealServer(t *testing.T) {
	doc := loadOpenAPI(t)
	cfg, secrets := testConfig(t)
	token := addAllScopesToken(&cfg)
	srv := startServer(t, cfg, secrets, nil)
	base := "http://" + srv.APIAddr()

	t.Run("EveryRouteIsDocumented", func(t *testing.T) { checkRoutesDocumented(t, doc, srv.Routes()) })
	t.Run("AnswersMatchTheDocument", func(t *testing.T) { checkAnswers(t, newContract(t, doc, base, token)) })
	t.Run("GeneratedClient", func(t *testing.T) { checkGeneratedClient(t, base, token) })
}

// addAllScopesToken configures a token with every scope and returns it.
func addAllScopesToken(cfg *server.Config) string {
	const token = "openapi-test-token-0123456789abcdef"
	sum := sha256.Sum256([]byte(token))
	cfg.Auth.Tokens = append(cfg.Auth.Tokens, server.TokenConfig{Name: "openapi", SHA256: hex.EncodeToString(sum[:]),
		Scopes: []string{"read", "write", "admin", "shell", "mcp"}})
	return token
}

// checkRoutesDocumented fails when a mounted route, or its scope, is
// missing from the document, or the document has an operation no route
// serves. A route of every method (MCP's) is a path item marked
// x-cairn-any-method.
func checkRoutesDocumented(t *testing.T, doc *openapi3.T, routes []route.Route) {
	require.NotEmpty(t, routes)
	ops := operations(doc)
	anyMethod := map[string]route.Route{}
	served := map[string]bool{}
	for _, rt := range routes {
		if rt.Method == "" {
			anyMethod[rt.Path] = rt
			continue
		}
		served[rt.String()] = true
		d, ok := ops[rt.String()]
		require.True(t, ok, "%s is served but not documented", rt)
		checkScope(t, rt.String(), d.op, rt.Scope)
	}
	for path, rt := range anyMethod {
		item := doc.Paths.Value(path)
		require.NotNil(t, item, "%s (every method) is served but not documented", path)
		require.Equal(t, true, item.Extensions["x-cairn-any-method"], "%s answers every method: mark it x-cairn-any-method", path)
		require.NotEmpty(t, item.Operations(), path)
		for method, op := range item.Operations() {
			checkScope(t, method+" "+path, op, rt.Scope)
		}
	}
	for key, d := range ops {
		_, everyMethod := anyMethod[d.path]
		require.True(t, served[key] || everyMethod, "%s is documented but not served", key)
	}
}

// checkScope holds an operation's x-cairn-scope and bearer scopes to the
// route's scope.
func checkScope(t *testing.T, key string, op *openapi3.Operation, scope route.Scope) {
	t.Helper()
	require.Equal(t, string(scope), op.Extensions["x-cairn-scope"], "%s: x-cairn-scope", key)
	require.NotNil(t, op.Security, "%s states no security requirement", key)
	if scope == route.Public {
		require.Empty(t, *op.Security, "%s needs no token", key)
		return
	}
	if scope == route.Any {
		require.Equal(t, openapi3.SecurityRequirements{{"bearer": {}}}, *op.Security, "%s: any valid token", key)
		return
	}
	require.Equal(t, openapi3.SecurityRequirements{{"bearer": {string(scope)}}}, *op.Security, key)
}

// contract sends requests to a real server and checks each exchange
// against the document with kin-openapi's validators.
type contract struct {
	doc    *openapi3.T
	table  map[string]int
	router routers.Router
	base   string
	token  string
}

func newContract(t *testing.T, doc *openapi3.T, base, token string) *contract {
	t.Helper()
	local := *doc
	local.Servers = openapi3.Servers{{URL: base}}
	router, err := gorillamux.NewRouter(&local)
	require.NoError(t, err)
	return &contract{doc: &local, table: reasonTable(t, doc), router: router, base: base, token: token}
}

// exchange is one request and what to expect of it.
type exchange struct {
	method, path string
	body         string
	header       http.Header
	noToken      bool
	// invalid marks a request that breaks the document on purpose (to
	// draw a refusal): only its answer is validated.
	invalid bool
	status  int
	reason  cairn.Reason // the refusal's reason, when status is an error
}

// do sends e, validates the request (unless invalid) and the answer
// against the document, checks the envelope, and returns the answer's
// header and body.
func (c *contract) do(t *testing.T, e exchange) (http.Header, []byte) {
	t.Helper()
	input := c.validationInput(t, e)
	if !e.invalid {
		require.NoError(t, openapi3filter.ValidateRequest(t.Context(), input), "%s %s: the request", e.method, e.path)
	}
	a := c.send(t, e)
	require.Equal(t, e.status, a.status, "%s %s: %s", e.method, e.path, a.body)
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: a.status,
		Header: a.header, Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	out.SetBodyBytes(a.body)
	require.NoError(t, openapi3filter.ValidateResponse(t.Context(), out), "%s %s: the answer %s", e.method, e.path, a.body)
	c.checkEnvelope(t, e, input.Route.Operation, a)
	return a.header, a.body
}

// validationInput finds e's operation in the document.
func (c *contract) validationInput(t *testing.T, e exchange) *openapi3filter.RequestValidationInput {
	t.Helper()
	req := c.request(t, e)
	rt, params, err := c.router.FindRoute(req)
	require.NoError(t, err, "%s %s is not in the document", e.method, e.path)
	return &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: rt,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
}

func (c *contract) request(t *testing.T, e exchange) *http.Request {
	t.Helper()
	var body io.Reader = http.NoBody
	if e.body != "" {
		body = strings.NewReader(e.body)
	}
	req, err := http.NewRequestWithContext(t.Context(), e.method, c.base+e.path, body)
	require.NoError(t, err)
	for k, vs := range e.header {
		req.Header[k] = vs
	}
	if e.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if !e.noToken {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req
}

// answer is what the server answered.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (c *contract) send(t *testing.T, e exchange) answer {
	t.Helper()
	resp, err := (&http.Client{Timeout: time.Minute}).Do(c.request(t, e))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return answer{status: resp.StatusCode, header: resp.Header, body: body}
}

// checkEnvelope checks the request ID of a JSON answer and, for a refusal,
// that its reason is one the operation documents, with that status.
func (c *contract) checkEnvelope(t *testing.T, e exchange, op *openapi3.Operation, a answer) {
	t.Helper()
	if a.status == http.StatusNotModified {
		return
	}
	var env struct {
		Success   bool   `json:"success"`
		RequestID string `json:"request_id"`
		Error     struct {
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(a.body, &env), "%s %s", e.method, e.path)
	require.Equal(t, a.header.Get("X-Request-ID"), env.RequestID)
	if a.status < http.StatusBadRequest {
		require.True(t, env.Success)
		return
	}
	key := e.method + " " + e.path
	require.Equal(t, string(e.reason), env.Error.Reason, "%s: %s", key, a.body)
	require.Equal(t, a.status, env.Error.Code)
	require.Contains(t, opReasons(t, key, op), env.Error.Reason, "%s answered a reason it does not document", key)
	require.Equal(t, a.status, reasonStatus(t, c.table, key, op, env.Error.Reason), key)
}

// checkAnswers walks a sample of routes — the probes, a workspace's life,
// the staging flow to a registered artifact, the audit, and refusals of
// each kind — validating every exchange.
func checkAnswers(t *testing.T, c *contract) {
	c.do(t, exchange{method: "GET", path: "/liveness/alive", noToken: true, status: 200})
	c.do(t, exchange{method: "GET", path: "/liveness/ready", noToken: true, status: 200})

	_, body := c.do(t, exchange{method: "POST", path: "/v1/workspaces", body: `{"name":"openapi-ws","description":"contract"}`, status: 200})
	var created struct{ Workspace cairn.Workspace }
	require.NoError(t, json.Unmarshal(body, &created))
	ws := "/v1/workspaces/" + created.Workspace.ID

	c.do(t, exchange{method: "POST", path: "/v1/workspaces", body: `{"name":"not a name"}`, invalid: true,
		status: 400, reason: cairn.ReasonInvalidName})
	c.do(t, exchange{method: "POST", path: "/v1/workspaces", body: `{"name":"openapi-ws"}`, status: 409, reason: cairn.ReasonNameTaken})
	c.do(t, exchange{method: "GET", path: "/v1/workspaces", noToken: true, status: 401, reason: cairn.ReasonUnauthenticated})
	c.do(t, exchange{method: "GET", path: "/v1/workspaces?limit=0", invalid: true, status: 400, reason: cairn.ReasonInvalidQuery})

	header, _ := c.do(t, exchange{method: "GET", path: "/v1/workspaces?name=openapi-ws&limit=10", status: 200})
	etag := header.Get("ETag")
	require.NotEmpty(t, etag)
	c.do(t, exchange{method: "GET", path: "/v1/workspaces?name=openapi-ws&limit=10",
		header: http.Header{"If-None-Match": {etag}}, status: 304})

	c.do(t, exchange{method: "GET", path: ws, status: 200})
	c.do(t, exchange{method: "GET", path: "/v1/workspaces/00000000-0000-4000-8000-000000000000", status: 404,
		reason: cairn.ReasonWorkspaceNotFound})
	c.do(t, exchange{method: "PUT", path: ws + "/description", body: `{"description":null}`, status: 200})
	c.do(t, exchange{method: "GET", path: ws + "/files", status: 409, reason: cairn.ReasonVolumeNotReady})
	c.do(t, exchange{method: "GET", path: "/v1/events", status: 400, reason: cairn.ReasonInvalidParameters})
	c.do(t, exchange{method: "GET", path: "/v1/shells", status: 200})
	c.do(t, exchange{method: "POST", path: ws + "/shells", body: `{"cols":80,"rows":24}`, status: 404,
		reason: cairn.ReasonShellDisabled})

	artifact := checkStagingFlow(t, c, ws)
	c.do(t, exchange{method: "GET", path: "/v1/artifacts/" + artifact + "?presign=true&ttl=60", status: 200})
	c.do(t, exchange{method: "DELETE", path: "/v1/artifacts/" + artifact, status: 200})
	c.do(t, exchange{method: "GET", path: "/v1/artifacts/" + artifact, status: 404, reason: cairn.ReasonArtifactNotFound})

	c.do(t, exchange{method: "GET", path: "/v1/audit?order=desc&limit=5&type=NEW_WORKSPACE", status: 200})
	c.do(t, exchange{method: "POST", path: "/v1/maintenance/sweep?workspace_id=" + created.Workspace.ID, status: 200})
	c.do(t, exchange{method: "DELETE", path: ws, status: 200})
}

// checkStagingFlow mints a staging upload, PUTs bytes to it, registers
// them and lists the artifact; it returns the artifact's ID.
func checkStagingFlow(t *testing.T, c *contract, ws string) string {
	t.Helper()
	content := []byte("bytes of the OpenAPI contract test\n")
	digest := sha256.Sum256(content)
	sum := base64.StdEncoding.EncodeToString(digest[:])
	mint := fmt.Sprintf(`{"size":%d,"sha256_b64":%q}`, len(content), sum)
	_, body := c.do(t, exchange{method: "POST", path: ws + "/new-staging", body: mint, status: 200})
	var minted struct{ Staging cairn.Staging }
	require.NoError(t, json.Unmarshal(body, &minted))
	putStagedBytes(t, minted.Staging.PutURL, content, sum)

	register := fmt.Sprintf(`{"staging_object_key":%q,"name":"contract"}`, minted.Staging.Key)
	_, body = c.do(t, exchange{method: "POST", path: ws + "/artifacts", body: register, status: 200})
	var registered struct{ Artifact cairn.Artifact }
	require.NoError(t, json.Unmarshal(body, &registered))
	c.do(t, exchange{method: "POST", path: ws + "/artifacts", body: register, status: 409, reason: cairn.ReasonNameTaken})
	c.do(t, exchange{method: "GET", path: ws + "/artifacts?state=RECORDED&state=MISSING_OBJECT", status: 200})
	return registered.Artifact.ID
}

// putStagedBytes uploads content to a presigned staging PUT as a client
// must: its exact length and its SHA-256.
func putStagedBytes(t *testing.T, putURL string, content []byte, sum string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, putURL, bytes.NewReader(content))
	require.NoError(t, err)
	req.Header.Set("x-amz-checksum-sha256", sum)
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
}

// checkGeneratedClient drives the server with the client generated from
// the document: create a workspace, find it in the list, delete it.
func checkGeneratedClient(t *testing.T, base, token string) {
	ctx := t.Context()
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
	api, err := apiclient.NewClientWithResponses(base, apiclient.WithRequestEditorFn(bearer))
	require.NoError(t, err)

	description := "made by the generated client"
	created, err := api.CreateWorkspaceWithResponse(ctx, nil, apiclient.WorkspaceCreate{Name: "generated", Description: &description})
	require.NoError(t, err)
	require.NotNil(t, created.JSON200, "%d %s", created.StatusCode(), created.Body)
	ws := created.JSON200.Workspace
	require.Equal(t, "generated", ws.Name)
	require.Equal(t, apiclient.VolumeState("NONE"), ws.VolumeState)

	listed, err := api.ListWorkspacesWithResponse(ctx, &apiclient.ListWorkspacesParams{Name: &[]string{"generated"}})
	require.NoError(t, err)
	require.NotNil(t, listed.JSON200, "%d %s", listed.StatusCode(), listed.Body)
	require.NotNil(t, listed.JSON200.Workspaces)
	require.Len(t, *listed.JSON200.Workspaces, 1)
	require.Equal(t, ws.Id, (*listed.JSON200.Workspaces)[0].Id)

	deleted, err := api.DeleteWorkspaceWithResponse(ctx, ws.Id.String(), nil)
	require.NoError(t, err)
	require.NotNil(t, deleted.JSON200, "%d %s", deleted.StatusCode(), deleted.Body)

	gone, err := api.GetWorkspaceWithResponse(ctx, ws.Id.String(), nil)
	require.NoError(t, err)
	require.NotNil(t, gone.JSON404, "%d %s", gone.StatusCode(), gone.Body)
	require.Equal(t, apiclient.Reason(cairn.ReasonWorkspaceNotFound), gone.JSON404.Error.Reason)
}
