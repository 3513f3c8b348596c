package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/auth/authtest"
	"github.com/cairn-dev/cairn/server/docker"
	"github.com/cairn-dev/cairn/server/mcp"
	"github.com/cairn-dev/cairn/server/postgres"
	"github.com/cairn-dev/cairn/server/s3/s3test"
	"github.com/cairn-dev/cairn/server/service"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// harness is the MCP endpoint over the real service (real Postgres, real
// Docker, a bucket of the real store) on a test HTTP server, with what the
// tests need to look behind its back.
type harness struct {
	url    string           // the endpoint
	svc    *service.Service // to seed what agents cannot create
	db     *pgxpool.Pool    // to edit rows behind the service's back
	app    string           // the app name; its volumes and containers go at cleanup
	sdk    *awss3.Client    // a client of the store
	bucket string
	logs   *syncBuffer // the endpoint's log, JSON lines
}

// setup serves the endpoint as a server without tokens mounts it, and
// returns the harness. cfg.Logger is
// replaced by one that writes to h.logs.
func setup(t testing.TB, cfg mcp.Config) *harness {
	t.Helper()
	h := newHarness(t)
	h.serveMCP(t, h.svc, cfg)
	return h
}

// serveMCP serves the endpoint over svc, as setup does; svc may wrap h.svc
// to act at a chosen point of a call.
func (h *harness) serveMCP(t testing.TB, svc mcp.Services, cfg mcp.Config) {
	t.Helper()
	cfg.Logger = slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Enable = true
	h.url = serve(t, authtest.Mount(t, "", mcp.Routes(svc, cfg))) + mcp.Path
}

// newHarness wires the service, without serving anything yet.
func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessWith(t, service.Config{})
}

// newHarnessWith wires the service with cfg, its app name set.
func newHarnessWith(t testing.TB, cfg service.Config) *harness {
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

	gw, bucket := stacktest.S3(t), stacktest.Bucket(t)
	objects := s3test.Open(t, gw, bucket, "")
	runtime := docker.New(cli, docker.Config{AppName: app, Image: image, NetworkMode: "host"})
	t.Cleanup(func() {
		if err := runtime.CloseBrowsers(context.Background()); err != nil {
			t.Errorf("remove the browse containers: %v", err)
		}
	})
	cfg.AppName = app
	svc := service.New(store, runtime, objects, cfg)
	// Pinned as the server pins them, so parallel puts never race deletes.
	require.NoError(t, svc.PinKeyPrefixes(ctx))
	return &harness{svc: svc, db: db, app: app, sdk: gw.Client(), bucket: bucket, logs: &syncBuffer{}}
}

// serve runs h on a test server and returns its URL. Registered last, the
// server stops before the database and the app's volumes go.
func serve(t testing.TB, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// workspace creates a workspace through the service, with a READY volume
// when ready is set.
func (h *harness) workspace(t testing.TB, name string, ready bool) *cairn.Workspace {
	t.Helper()
	ws, err := h.svc.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: name})
	require.NoError(t, err)
	if ready {
		require.NoError(t, h.svc.SetupVolume(t.Context(), ws.ID))
		ws.VolumeState = cairn.VolumeReady
	}
	return ws
}

// artifact records body as an artifact of ws without a volume: the bytes go
// straight to a staging key, then the service registers them.
func (h *harness) artifact(t testing.TB, ws *cairn.Workspace, name, body string, desc *string) *cairn.Artifact {
	t.Helper()
	key := "staging/" + ws.ID + "/" + ulid.Make().String()
	_, err := h.sdk.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(key),
		Body: strings.NewReader(body), ContentLength: aws.Int64(int64(len(body)))})
	require.NoError(t, err)
	art, err := h.svc.RegisterArtifact(t.Context(), ws.ID, cairn.ArtifactCreate{StagingKey: key, Name: name, Description: desc})
	require.NoError(t, err)
	return art
}

// exec runs SQL on the test database.
func (h *harness) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := h.db.Exec(t.Context(), sql, args...)
	require.NoError(t, err)
}

// connect returns an initialised mcp-go client of url. version "" lets the
// client negotiate the newest protocol.
func connect(t testing.TB, url, version string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url)
	require.NoError(t, err)
	require.NoError(t, c.Start(t.Context()))
	t.Cleanup(func() { _ = c.Close() }) // the server may already be gone
	req := mcpgo.InitializeRequest{}
	req.Params.ProtocolVersion = version
	req.Params.ClientInfo = mcpgo.Implementation{Name: "cairn-test", Version: "1"}
	_, err = c.Initialize(t.Context(), req)
	require.NoError(t, err)
	return c
}

// call calls a tool; a JSON-RPC error fails the test.
func call(t testing.TB, c *client.Client, tool string, args any) *mcpgo.CallToolResult {
	t.Helper()
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.CallTool(t.Context(), req)
	require.NoError(t, err)
	return res
}

// ok checks a successful result of exactly one text item and returns it.
func ok(t testing.TB, res *mcpgo.CallToolResult) string {
	t.Helper()
	require.False(t, res.IsError, "result: %s", resultText(res))
	return resultText(res)
}

// fails checks an isError result of exactly one text item that starts with
// reason, carries no internals, and returns the text.
func fails(t testing.TB, res *mcpgo.CallToolResult, reason string) string {
	t.Helper()
	require.True(t, res.IsError, "result: %s", resultText(res))
	require.Nil(t, res.StructuredContent)
	msg := resultText(res)
	require.True(t, strings.HasPrefix(msg, reason+": "), "want reason %s, got %q", reason, msg)
	for _, bad := range []string{"SQLSTATE", "pgx", "pgconn", "duplicate key", "violates", "constraint",
		"goroutine", ".go:", "context deadline", "*cairn.", "Error response from daemon", "/var/lib/docker"} {
		require.NotContains(t, msg, bad, "the error leaks internals")
	}
	return msg
}

// stored checks the success of a tool that stores an artifact: its one
// sentence, then a resource_link to the artifact, and structuredContent.
// It returns the sentence and the link.
func stored(t testing.TB, res *mcpgo.CallToolResult) (string, mcpgo.ResourceLink) {
	t.Helper()
	require.False(t, res.IsError, "result: %s", mustJSON(res.Content))
	require.NotNil(t, res.StructuredContent)
	require.Len(t, res.Content, 2, "the sentence, then the link")
	text, isText := res.Content[0].(mcpgo.TextContent)
	require.True(t, isText, "content[0] is %T", res.Content[0])
	link, isLink := res.Content[1].(mcpgo.ResourceLink)
	require.True(t, isLink, "content[1] is %T", res.Content[1])
	return text.Text, link
}

func resultText(res *mcpgo.CallToolResult) string {
	if len(res.Content) != 1 {
		return "<" + string(mustJSON(res.Content)) + ">"
	}
	text, isText := res.Content[0].(mcpgo.TextContent)
	if !isText {
		return "<not text>"
	}
	return text.Text
}

// structured checks a read tool's success: structuredContent and the one
// text item hold the same JSON. It decodes that JSON into v.
func structured(t testing.TB, res *mcpgo.CallToolResult, v any) {
	t.Helper()
	text := ok(t, res)
	require.NotNil(t, res.StructuredContent)
	require.JSONEq(t, string(mustJSON(res.StructuredContent)), text)
	require.NoError(t, json.Unmarshal([]byte(text), v))
}

// post sends one JSON-RPC message as a bare HTTP request to url, as a
// 2025-06-18 client would without initialising, and returns the status and
// the JSON-RPC answer (read from an event stream if need be). hdr holds
// extra headers as name, value pairs; "Host" sets the Host header.
func post(t testing.TB, url, body string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", mcpgo.ProtocolVersion20250618)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = lastEvent(t, data)
	}
	return resp.StatusCode, data
}

// lastEvent returns the data of the last event of an event stream.
func lastEvent(t testing.TB, stream []byte) []byte {
	t.Helper()
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, isData := strings.CutPrefix(sc.Text(), "data: "); isData {
			last = []byte(data)
		}
	}
	require.NotNil(t, last, "no event in %s", stream)
	return last
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// syncBuffer is a log sink that handlers of concurrent requests share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines returns the JSON log lines written so far.
func (b *syncBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(b.buf.String()) {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m))
		out = append(out, m)
	}
	return out
}
