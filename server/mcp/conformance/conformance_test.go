package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// loopbackOrigins are the browser origins a local server admits to its
// MCP endpoint, as `cairn dev` does.
var loopbackOrigins = []string{"http://localhost:*", "http://127.0.0.1:*", `"http://[::1]:*"`}

// node returns the Node.js that testdata's programs run on (installed
// there by `make deps`: the suite needs a newer one than Debian's).
func node(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join("testdata", "node_modules", ".bin", "node"))
	require.NoError(t, err)
	_, err = os.Stat(bin)
	stacktest.Need(t, "the MCP test clients in testdata/node_modules (make deps)", err)
	return bin
}

// The suite's server scenarios of version 0.1.16 that apply to cairn's
// server (tools, and resources read by URI, none listed), and the rest
// with why they cannot apply.
var (
	applicable    = []string{"server-initialize", "ping", "tools-list", "resources-list", "dns-rebinding-protection"}
	notApplicable = map[string]string{
		"tools-call-simple-text":        "calls the suite's fixture tool test_simple_text, which only an SDK's test server has",
		"tools-call-image":              "calls a fixture tool (test_image_content)",
		"tools-call-audio":              "calls a fixture tool (test_audio_content)",
		"tools-call-embedded-resource":  "calls a fixture tool (test_embedded_resource)",
		"tools-call-mixed-content":      "calls a fixture tool (test_multiple_content_types)",
		"tools-call-with-logging":       "calls a fixture tool (test_tool_with_logging)",
		"tools-call-error":              "calls a fixture tool (test_error_handling); cairn's tool errors are isError results, held by server/mcp's tests",
		"tools-call-with-progress":      "calls a fixture tool (test_tool_with_progress)",
		"tools-call-sampling":           "calls a fixture tool that asks the client to sample; cairn asks clients for nothing",
		"tools-call-elicitation":        "calls a fixture tool that elicits; cairn asks clients for nothing",
		"elicitation-sep1034-defaults":  "elicitation: cairn asks clients for nothing",
		"elicitation-sep1330-enums":     "elicitation: cairn asks clients for nothing",
		"json-schema-2020-12":           "lists a fixture tool (json_schema_2020_12_tool); cairn's schemas are checked by a 2020-12 validator in server/mcp's tests",
		"logging-set-level":             "cairn offers no logging capability",
		"completion-complete":           "cairn offers no completions",
		"server-sse-polling":            "needs a session and a standalone GET stream; cairn's endpoint is stateless",
		"server-sse-multiple-streams":   "needs a session and a standalone GET stream; cairn's endpoint is stateless",
		"resources-read-text":           "reads the suite's fixture resource test://static-text",
		"resources-read-binary":         "reads a fixture resource (test://static-binary)",
		"resources-templates-read":      "reads a fixture template (test://template/{id}/data); cairn's templates are read in server/mcp's tests",
		"resources-subscribe":           "cairn offers no resource subscriptions: its resources are read when asked",
		"resources-unsubscribe":         "cairn offers no resource subscriptions",
		"prompts-list":                  "cairn offers no prompts",
		"prompts-get-simple":            "cairn offers no prompts",
		"prompts-get-with-args":         "cairn offers no prompts",
		"prompts-get-embedded-resource": "cairn offers no prompts",
		"prompts-get-with-image":        "cairn offers no prompts",
	}
)

// check is one result line of the suite's checks.json.
type check struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ErrorMessage string `json:"errorMessage"`
}

// TestConformanceSuite runs the official MCP conformance suite's
// applicable server scenarios against a real server as a local deployment
// runs it: loopback, no tokens, the loopback origins admitted. Every
// scenario the suite lists is either run or named with why it cannot
// apply, so a scenario a new suite version adds fails here until it is
// placed.
func TestConformanceSuite(t *testing.T) {
	bin := node(t)
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true, NoAuth: true, MCPOrigins: loopbackOrigins})
	suite := filepath.Join("testdata", "node_modules", ".bin", "conformance")

	listed, err := exec.CommandContext(t.Context(), bin, suite, "list", "--server").CombinedOutput()
	require.NoError(t, err, string(listed))
	for _, line := range strings.Split(string(listed), "\n") {
		name, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, " ")
		if why, skip := notApplicable[name]; skip {
			t.Logf("%-32s not applicable: %s", name, why)
			continue
		}
		require.Contains(t, applicable, name, "the suite lists scenario %s: run it or say why it cannot apply", name)
	}

	for _, scenario := range applicable {
		t.Run(scenario, func(t *testing.T) {
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, suite, "server", "--url", srv.URL+"/v1/mcp", "--scenario", scenario, "-o", out)
			printed, err := cmd.CombinedOutput()
			t.Logf("%s", printed)
			require.NoError(t, err)
			checks := readChecks(t, out)
			require.NotEmpty(t, checks)
			for _, c := range checks {
				t.Logf("%s/%s: %s %s", scenario, c.ID, c.Status, c.ErrorMessage)
				require.Equal(t, "SUCCESS", c.Status, "%s/%s: %s", scenario, c.ID, c.ErrorMessage)
			}
		})
	}
}

// readChecks reads the checks.json the suite wrote under dir.
func readChecks(t *testing.T, dir string) []check {
	t.Helper()
	found, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	require.NoError(t, err)
	require.Len(t, found, 1, "one result directory under %s", dir)
	data, err := os.ReadFile(found[0])
	require.NoError(t, err)
	var checks []check
	require.NoError(t, json.Unmarshal(data, &checks))
	return checks
}

// rpc posts one JSON-RPC message with the given headers and decodes the
// answer, JSON or a one-event stream.
func rpc(t *testing.T, url string, headers map[string]string, body string) map[string]any {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.Lines(string(data)) {
			if payload, ok := strings.CutPrefix(line, "data: "); ok {
				data = []byte(payload)
			}
		}
	}
	var answer map[string]any
	require.NoError(t, json.Unmarshal(data, &answer), "status %d: %s", resp.StatusCode, data)
	return answer
}

// member is answer's object under key ("result" or "error").
func member(t *testing.T, answer map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := answer[key].(map[string]any)
	require.True(t, ok, "no %s in %v", key, answer)
	return v
}

// modern is a request of protocol version 2026-07-28: the version in a
// header and in _meta, the method (and the tool's name) in headers.
func modern(t *testing.T, method, name, version string) (map[string]string, string) {
	t.Helper()
	params := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    version,
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
	}}
	if method == "tools/call" {
		params["name"], params["arguments"] = "list_workspaces", map[string]any{}
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.NoError(t, err)
	headers := map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method}
	if name != "" {
		headers["Mcp-Name"] = name
	}
	return headers, string(body)
}

// TestBothEras: one endpoint serves a raw 2026-07-28 sequence (discover,
// tools/list twice alike, tools/call; a wrong Mcp-Name is -32020 and an
// unsupported version -32022) and a 2025-11-25 session (initialize,
// initialized, tools/list, tools/call).
func TestBothEras(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true})
	url := srv.URL + "/v1/mcp"
	auth := "Bearer " + srv.Token
	with := func(h map[string]string) map[string]string { h["Authorization"] = auth; return h }

	t.Run("2026-07-28", func(t *testing.T) {
		h, body := modern(t, "server/discover", "", "2026-07-28")
		discovered := member(t, rpc(t, url, with(h), body), "result")
		require.Contains(t, discovered["supportedVersions"], "2026-07-28")
		require.Contains(t, discovered["supportedVersions"], "2025-11-25")
		require.Contains(t, discovered["capabilities"], "tools")

		h, body = modern(t, "tools/list", "", "2026-07-28")
		first, err := json.Marshal(rpc(t, url, with(h), body)["result"])
		require.NoError(t, err)
		second, err := json.Marshal(rpc(t, url, with(h), body)["result"])
		require.NoError(t, err)
		require.JSONEq(t, string(first), string(second), "tools/list is deterministic")
		require.Contains(t, string(first), `"name":"snapshot_workspace"`)

		h, body = modern(t, "tools/call", "list_workspaces", "2026-07-28")
		called := member(t, rpc(t, url, with(h), body), "result")
		require.Equal(t, "complete", called["resultType"])
		require.Contains(t, called, "structuredContent")

		h, body = modern(t, "tools/call", "delete_artifact", "2026-07-28")
		wrongName := member(t, rpc(t, url, with(h), body), "error")
		require.InDelta(t, -32020, wrongName["code"], 0, "a Mcp-Name that is not the body's tool")

		h, body = modern(t, "tools/list", "", "2099-01-01")
		unsupported := member(t, rpc(t, url, with(h), body), "error")
		require.InDelta(t, -32022, unsupported["code"], 0, "an unsupported protocol version")
	})

	t.Run("2025-11-25", func(t *testing.T) {
		legacy := func() map[string]string {
			return with(map[string]string{"MCP-Protocol-Version": "2025-11-25"})
		}
		init := rpc(t, url, with(map[string]string{}), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":`+
			`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		require.Equal(t, "2025-11-25", member(t, init, "result")["protocolVersion"])
		notified, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url,
			strings.NewReader(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		require.NoError(t, err)
		notified.Header.Set("Content-Type", "application/json")
		notified.Header.Set("Accept", "application/json, text/event-stream")
		notified.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(notified)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusAccepted, resp.StatusCode)

		listed := member(t, rpc(t, url, legacy(), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "result")
		require.NotEmpty(t, listed["tools"])
		called := rpc(t, url, legacy(), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_workspaces","arguments":{}}}`)
		require.Contains(t, called["result"], "structuredContent")
	})
}

// operator is a REST client of srv, to look behind the agent's back.
func operator(t *testing.T, srv *stacktest.Server) *client.Client {
	t.Helper()
	c, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	return c
}

// readyWorkspace is what an operator does before an agent works on a
// workspace of the operator's: one with a READY volume.
func readyWorkspace(t *testing.T, srv *stacktest.Server, name string) (*client.Client, *cairn.Workspace) {
	t.Helper()
	c := operator(t, srv)
	ws, err := c.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: name})
	require.NoError(t, err)
	require.NoError(t, c.SetupVolume(t.Context(), ws.ID))
	return c, ws
}

// agentsWorkspace finds the workspace an agent flow made.
func agentsWorkspace(t *testing.T, c *client.Client, name string) *cairn.Workspace {
	t.Helper()
	list, err := c.FindWorkspaces(t.Context(), cairn.WorkspaceFilter{Names: []string{name}})
	require.NoError(t, err)
	require.Len(t, list, 1, "the agent created workspace %s", name)
	require.Equal(t, "made by an agent", *list[0].Description)
	return list[0]
}

// flowResult is what an agent flow saw.
type flowResult struct {
	ProtocolVersion string   `json:"protocol_version"`
	Tools           int      `json:"tools"`
	VolumeState     string   `json:"volume_state"`
	Read            string   `json:"read"`
	Artifact        string   `json:"artifact"`
	Links           []string `json:"links"`
	Snapshot        string   `json:"snapshot"`
}

// checkFlow holds an agent flow's result to what the server has: the file
// written, the packed artifact, the snapshot.
func checkFlow(t *testing.T, c *client.Client, ws *cairn.Workspace, got flowResult, text string) {
	t.Helper()
	require.Equal(t, "READY", got.VolumeState)
	require.Equal(t, text, got.Read)
	require.Equal(t, "flow-pack", got.Artifact)
	require.Equal(t, []string{"cairn://workspaces/" + ws.Name + "/artifacts/flow-pack"}, got.Links)
	require.Equal(t, "flow-snap", got.Snapshot)

	file, err := c.ReadFile(t.Context(), ws.ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/flow/hello.txt"})
	require.NoError(t, err)
	require.Equal(t, text, string(file.Data))
	artifacts, err := c.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{"flow-pack"}})
	require.NoError(t, err)
	require.Len(t, artifacts, 1)
	require.Positive(t, artifacts[0].Size)
	snaps, err := c.ListSnapshots(t.Context(), ws.ID)
	require.NoError(t, err)
	require.Len(t, snaps, 1)
	require.Equal(t, "flow-snap", snaps[0].Name)
	require.Equal(t, 5, snaps[0].Entries, "the root, flow/, hello.txt, sub/, second.txt") //nolint:testifylint // a count
}

// TestAgentFlowTypeScriptSDK: the official TypeScript SDK's client, with
// a URL and a token, runs the agent flow (testdata/flow.mjs) on the
// 2025-11-25 handshake it negotiates.
func TestAgentFlowTypeScriptSDK(t *testing.T) {
	bin := node(t)
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true})
	c := operator(t, srv)

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "flow.mjs", srv.URL+"/v1/mcp", "ts-flow")
	cmd.Dir = "testdata"
	cmd.Env = append(os.Environ(), "CAIRN_TOKEN="+srv.Token)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "flow.mjs: %s", stderr.String())
	t.Logf("flow.mjs: %s", out)
	var got flowResult
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, "2025-11-25", got.ProtocolVersion)
	require.Greater(t, got.Tools, 20)
	checkFlow(t, c, agentsWorkspace(t, c, "ts-flow"), got, "written by the TypeScript SDK\n")
}

// TestAgentFlowMCPGo: mcp-go's client runs the same agent flow on the
// 2026-07-28 protocol it prefers (server/discover, no handshake).
func TestAgentFlowMCPGo(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true})
	c := operator(t, srv)
	const workspace = "go-flow"

	agent, err := mcpclient.NewStreamableHttpClient(srv.URL+"/v1/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + srv.Token}))
	require.NoError(t, err)
	defer func() { _ = agent.Close() }()
	require.NoError(t, agent.Start(t.Context()))
	_, err = agent.Initialize(t.Context(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "cairn-flow", Version: "1.0.0"}}})
	require.NoError(t, err)
	tools, err := agent.ListTools(t.Context(), mcpgo.ListToolsRequest{})
	require.NoError(t, err)

	call := func(name string, args map[string]any) *mcpgo.CallToolResult {
		args["workspace_name"] = workspace
		res, err := agent.CallTool(t.Context(), mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: name, Arguments: args}})
		require.NoError(t, err)
		require.False(t, res.IsError, "%s: %v", name, res.Content)
		return res
	}
	field := func(res *mcpgo.CallToolResult, path ...string) any {
		v := res.StructuredContent
		for _, k := range path {
			v = v.(map[string]any)[k]
		}
		return v
	}
	text := "written by mcp-go\n"
	got := flowResult{ProtocolVersion: agent.ProtocolVersion(), Tools: len(tools.Tools)}
	call("create_workspace", map[string]any{"description": "made by an agent"})
	call("provision_volume", map[string]any{})
	got.VolumeState = field(call("get_workspace", map[string]any{}), "workspace", "volume_state").(string)
	call("create_directory", map[string]any{"path": "/mnt/cairn/ws/flow/sub"})
	call("write_file", map[string]any{"path": "/mnt/cairn/ws/flow/hello.txt", "content": text})
	call("write_file", map[string]any{"path": "/mnt/cairn/ws/flow/sub/second.txt", "content": "two\n"})
	got.Read = field(call("read_file", map[string]any{"path": "/mnt/cairn/ws/flow/hello.txt"}), "content").(string)
	packed := call("upload_artifact", map[string]any{"source_path": "/mnt/cairn/ws/flow", "artifact_name": "flow-pack", "format": "tar.gz"})
	got.Artifact = field(packed, "artifact", "name").(string)
	for _, content := range packed.Content {
		if link, ok := content.(mcpgo.ResourceLink); ok {
			got.Links = append(got.Links, link.URI)
		}
	}
	got.Snapshot = field(call("snapshot_workspace", map[string]any{"snapshot_name": "flow-snap"}), "snapshot", "name").(string)

	require.Equal(t, "2026-07-28", got.ProtocolVersion)
	checkFlow(t, c, agentsWorkspace(t, c, workspace), got, text)
}

// bigFile is the size of the volume file the progress tests upload: the
// issue's measure, one GiB.
const bigFile = 1 << 30

// agentFor is an mcp-go client of srv on the protocol version given ("":
// the newest), counting the progress notifications it receives.
func agentFor(t *testing.T, srv *stacktest.Server, version string) (*mcpclient.Client, *progressLog) {
	t.Helper()
	var opts []mcpclient.ClientOption
	if version != "" {
		opts = append(opts, mcpclient.WithProtocolVersion(version))
	}
	tr, err := transport.NewStreamableHTTP(srv.URL+"/v1/mcp",
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + srv.Token}))
	require.NoError(t, err)
	agent := mcpclient.NewClient(tr, opts...)
	t.Cleanup(func() { _ = agent.Close() })
	log := &progressLog{}
	agent.OnNotification(log.record)
	require.NoError(t, agent.Start(t.Context()))
	_, err = agent.Initialize(t.Context(), mcpgo.InitializeRequest{Params: mcpgo.InitializeParams{
		ClientInfo: mcpgo.Implementation{Name: "cairn-progress", Version: "1.0.0"}}})
	require.NoError(t, err)
	return agent, log
}

// progressLog keeps the progress notifications of one token.
type progressLog struct {
	mu    sync.Mutex
	notes []mcpgo.ProgressNotificationParams
	half  chan struct{} // closed at the first report past half of the total
	once  sync.Once
}

func (l *progressLog) record(n mcpgo.JSONRPCNotification) {
	if n.Method != string(mcpgo.MethodNotificationProgress) {
		return
	}
	data, err := json.Marshal(n.Params.AdditionalFields)
	if err != nil {
		return
	}
	var p mcpgo.ProgressNotificationParams
	if json.Unmarshal(data, &p) != nil {
		return
	}
	l.mu.Lock()
	l.notes = append(l.notes, p)
	l.mu.Unlock()
	if p.Total > 0 && p.Progress > p.Total/2 && l.half != nil {
		l.once.Do(func() { close(l.half) })
	}
}

// take returns the notifications so far and forgets them.
func (l *progressLog) take() []mcpgo.ProgressNotificationParams {
	l.mu.Lock()
	defer l.mu.Unlock()
	notes := l.notes
	l.notes = nil
	return notes
}

func uploadBig(ws *cairn.Workspace) mcpgo.CallToolRequest {
	req := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "upload_artifact", Arguments: uploadBigArgs(ws)}}
	req.Params.Meta = &mcpgo.Meta{ProgressToken: "upload-big"}
	return req
}

// uploadBigArgs are the arguments of upload_artifact that store the
// volume's big file as artifact big.
func uploadBigArgs(ws *cairn.Workspace) map[string]any {
	return map[string]any{"workspace_name": ws.Name, "source_path": "/mnt/cairn/ws/big", "artifact_name": "big"}
}

// TestTransferProgress: a 1 GiB upload_artifact from a volume, asked with
// a progress token, reports its bytes on the call's stream as it goes, in
// both protocol eras; so do the download_artifact that brings it back and
// the packing of a directory.
func TestTransferProgress(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true})
	_, ws := readyWorkspace(t, srv, "progress")
	stacktest.RunInVolume(t, srv.App, ws.VolumeName, fmt.Sprintf("head -c %d /dev/urandom > /mnt/cairn/ws/big && "+
		"mkdir /mnt/cairn/ws/dir && head -c %d /dev/urandom > /mnt/cairn/ws/dir/noise", bigFile, 64<<20))

	t.Run("Pack", func(t *testing.T) {
		agent, log := agentFor(t, srv, "")
		req := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "upload_artifact", Arguments: map[string]any{
			"workspace_name": ws.Name, "source_path": "/mnt/cairn/ws/dir", "artifact_name": "packed", "format": "tar.gz"}}}
		req.Params.Meta = &mcpgo.Meta{ProgressToken: "pack"}
		res, err := agent.CallTool(t.Context(), req)
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		notes := log.take()
		t.Logf("pack: %d progress notifications", len(notes))
		require.NotEmpty(t, notes)
		for i, n := range notes {
			require.Equal(t, "pack", n.ProgressToken)
			require.Zero(t, n.Total, "the archive's size is not known ahead")
			if i > 0 {
				require.Greater(t, n.Progress, notes[i-1].Progress)
			}
		}
		size := res.StructuredContent.(map[string]any)["size"].(float64)
		require.InDelta(t, size, notes[len(notes)-1].Progress, 0, "the last report is the whole archive")

		req = mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "unpack_artifact", Arguments: map[string]any{
			"workspace_name": ws.Name, "artifact_name": "packed", "target_dir": "/mnt/cairn/ws/unpacked"}}}
		req.Params.Meta = &mcpgo.Meta{ProgressToken: "unpack"}
		res, err = agent.CallTool(t.Context(), req)
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		notes = log.take()
		t.Logf("unpack: %d progress notifications", len(notes))
		require.NotEmpty(t, notes)
		last := notes[len(notes)-1]
		require.InDelta(t, size, last.Total, 0)
		require.InDelta(t, size, last.Progress, 0, "every byte of the archive fetched")
	})

	t.Run("SnapshotAndFork", func(t *testing.T) {
		agent, log := agentFor(t, srv, "")
		for _, call := range []mcpgo.CallToolParams{
			{Name: "snapshot_workspace", Arguments: map[string]any{"workspace_name": ws.Name}},
			{Name: "fork_workspace", Arguments: map[string]any{"workspace_name": ws.Name, "new_workspace_name": "forked"}},
		} {
			req := mcpgo.CallToolRequest{Params: call}
			req.Params.Meta = &mcpgo.Meta{ProgressToken: call.Name}
			res, err := agent.CallTool(t.Context(), req)
			require.NoError(t, err)
			require.False(t, res.IsError, "%v", res.Content)
			notes := log.take()
			require.NotEmpty(t, notes, call.Name)
			t.Logf("%s: %d progress notifications, the last %+v", call.Name, len(notes), notes[len(notes)-1])
			for i, n := range notes {
				require.Equal(t, call.Name, n.ProgressToken)
				if i > 0 {
					require.Greater(t, n.Progress, notes[i-1].Progress, "progress only grows")
				}
			}
			if call.Name == "fork_workspace" {
				// The restore comes last: its total is known, and its last
				// report is the end of the whole call.
				last := notes[len(notes)-1]
				require.Positive(t, last.Total)
				require.InDelta(t, last.Total, last.Progress, 0)
			}
		}
	})

	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			agent, log := agentFor(t, srv, version)
			req := uploadBig(ws)
			name := "big-" + strings.ReplaceAll(version, "-", "")
			req.Params.Arguments.(map[string]any)["artifact_name"] = name
			res, err := agent.CallTool(t.Context(), req)
			require.NoError(t, err)
			require.False(t, res.IsError, "%v", res.Content)
			// The measure: five reports or more of a 1 GiB upload.
			requireProgress(t, "upload", log.take(), "upload-big", 5)

			download := mcpgo.CallToolRequest{Params: mcpgo.CallToolParams{Name: "download_artifact", Arguments: map[string]any{
				"workspace_name": ws.Name, "artifact_name": name, "target_path": "/mnt/cairn/ws/" + name}}}
			download.Params.Meta = &mcpgo.Meta{ProgressToken: 7}
			res, err = agent.CallTool(t.Context(), download)
			require.NoError(t, err)
			require.False(t, res.IsError, "%v", res.Content)
			// Reports come every 250 ms: a download as fast as the disk
			// makes fewer, but one before the end at least.
			requireProgress(t, "download", log.take(), float64(7), 2)
		})
	}
}

// requireProgress checks the progress notifications of one transfer of
// bigFile bytes: at least least of them, of the call's token, growing, the
// last at the end.
func requireProgress(t *testing.T, what string, notes []mcpgo.ProgressNotificationParams, token any, least int) {
	t.Helper()
	t.Logf("%s: %d progress notifications for %d bytes", what, len(notes), bigFile)
	require.GreaterOrEqual(t, len(notes), least)
	for i, n := range notes {
		require.Equal(t, token, n.ProgressToken)
		require.InDelta(t, bigFile, n.Total, 0)
		if i > 0 {
			require.Greater(t, n.Progress, notes[i-1].Progress, "progress only grows")
		}
	}
	require.InDelta(t, bigFile, notes[len(notes)-1].Progress, 0, "the last report counts every byte")
}

// TestUploadCancelled: an agent that stops waiting half-way through a
// 1 GiB upload_artifact leaves no artifact, no object and no container,
// whether it closes the call's stream (2026-07-28, mcp-go's client) or
// sends notifications/cancelled (2025-11-25, raw requests).
func TestUploadCancelled(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{MCP: true})
	c, ws := readyWorkspace(t, srv, "cancel")
	stacktest.RunInVolume(t, srv.App, ws.VolumeName, fmt.Sprintf("head -c %d /dev/urandom > /mnt/cairn/ws/big", bigFile))
	before := stacktest.ObjectKeys(t, srv.S3, srv.Bucket)

	for name, cancelHalfWay := range map[string]func(t *testing.T) time.Time{
		"StreamClosed": func(t *testing.T) time.Time {
			agent, log := agentFor(t, srv, "")
			log.half = make(chan struct{})
			ctx, cancel := context.WithCancel(t.Context())
			called := make(chan error, 1)
			go func() {
				_, err := agent.CallTool(ctx, uploadBig(ws))
				called <- err
			}()
			select {
			case <-log.half:
			case err := <-called:
				t.Fatalf("the upload ended before half of it was reported: %v", err)
			}
			cancel()
			cancelled := time.Now()
			require.Error(t, <-called)
			return cancelled
		},
		"CancelledNotification": func(t *testing.T) time.Time {
			url := srv.URL + "/v1/mcp"
			return stacktest.CancelMCPCallHalfWay(t, url, url, srv.Token, "upload_artifact", uploadBigArgs(ws))
		},
	} {
		t.Run(name, func(t *testing.T) {
			cancelled := cancelHalfWay(t)
			stacktest.RequireCancelLeftNothing(t, c, srv.App, ws.ID, srv.S3, srv.Bucket, before, cancelled)
		})
	}
}
