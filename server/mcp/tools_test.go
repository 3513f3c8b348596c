package mcp_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/mcp"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// TestToolsList pins what tools/list publishes, byte for byte as sent
// (names, descriptions, input and output schemas, annotations), against
// testdata/tools.golden.json, and checks that mcp-go's client reads it.
func TestToolsList(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})

	t.Run("OKGolden", func(t *testing.T) {
		status, body := post(t, h.url, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		var resp struct {
			Result struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"result"`
		}
		require.NoError(t, json.Unmarshal(body, &resp))
		var got bytes.Buffer
		require.NoError(t, json.Indent(&got, resp.Result.Tools, "", "  "))
		got.WriteByte('\n')

		golden := filepath.Join("testdata", "tools.golden.json")
		if *update {
			require.NoError(t, os.MkdirAll("testdata", 0o755))
			require.NoError(t, os.WriteFile(golden, got.Bytes(), 0o644))
		}
		want, err := os.ReadFile(golden)
		require.NoError(t, err, "run with -update to create it")
		require.Equal(t, string(want), got.String())
	})

	t.Run("OKFileToolHints", func(t *testing.T) {
		res, err := connect(t, h.url, "").ListTools(t.Context(), mcpgo.ListToolsRequest{})
		require.NoError(t, err)
		type hints struct{ readOnly, destructive, idempotent bool }
		want := map[string]hints{
			"get_file_info": {readOnly: true}, "search_files": {readOnly: true}, "directory_tree": {readOnly: true},
			"write_file":       {destructive: true, idempotent: true},
			"edit_file":        {destructive: true},
			"create_directory": {idempotent: true},
			"move_file":        {destructive: true},
			"delete_path":      {destructive: true, idempotent: true},
		}
		for _, tool := range res.Tools {
			w, isFileTool := want[tool.Name]
			if !isFileTool {
				continue
			}
			delete(want, tool.Name)
			a := tool.Annotations
			require.Equal(t, w.readOnly, *a.ReadOnlyHint, tool.Name)
			require.False(t, *a.OpenWorldHint, tool.Name)
			if !w.readOnly {
				require.Equal(t, w.destructive, *a.DestructiveHint, tool.Name)
				require.Equal(t, w.idempotent, *a.IdempotentHint, tool.Name)
			}
			require.Equal(t, "object", tool.OutputSchema.Type, tool.Name)
			require.Contains(t, tool.OutputSchema.Properties, "path", tool.Name)
		}
		require.Empty(t, want, "every file tool is listed")
	})

	t.Run("OKSchemaForm", func(t *testing.T) {
		res, err := connect(t, h.url, "").ListTools(t.Context(), mcpgo.ListToolsRequest{})
		require.NoError(t, err)
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			require.NotEmpty(t, tool.Description, tool.Name)
			schema := tool.InputSchema
			require.Equal(t, "object", schema.Type, tool.Name)
			require.Equal(t, false, schema.AdditionalProperties, tool.Name)
			for name, prop := range schema.Properties {
				p := prop.(map[string]any)
				require.NotEmpty(t, p["description"], "%s.%s", tool.Name, name)
				for _, banned := range []string{"minimum", "maximum", "maxLength", "minLength", "pattern"} {
					require.NotContains(t, p, banned, "%s.%s: constraints are prose only", tool.Name, name)
				}
			}
			require.Equal(t, "object", tool.OutputSchema.Type, "%s: output schema", tool.Name)
			require.NotNil(t, tool.Annotations.ReadOnlyHint, tool.Name)
			if !*tool.Annotations.ReadOnlyHint {
				require.NotNil(t, tool.Annotations.DestructiveHint, tool.Name)
				require.NotNil(t, tool.Annotations.IdempotentHint, tool.Name)
			}
		}
		require.ElementsMatch(t, []string{"get_workspace", "list_workspaces", "create_workspace", "provision_volume",
			"list_artifacts", "download_artifact",
			"upload_artifact", "update_artifact", "delete_artifact", "rename_artifact",
			"list_files", "read_file", "unpack_artifact", "get_file_info", "search_files", "directory_tree",
			"write_file", "edit_file", "create_directory", "move_file", "delete_path",
			"snapshot_workspace", "list_snapshots", "restore_snapshot", "fork_workspace"}, names)
	})
}

// TestArguments checks the order of argument checks: the input schema
// (invalid_arguments), then names (invalid_name), then limits
// (invalid_parameters), all before any lookup.
func TestArguments(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	h.workspace(t, "ws", false)
	c := connect(t, h.url, "")

	long := strings.Repeat("d", 4097)
	for _, tc := range []struct {
		name   string
		tool   string
		args   any
		reason string
		text   string
	}{
		{"ErrMissingRequired", "get_workspace", map[string]any{},
			"invalid_arguments", "missing required property 'workspace_name'"},
		{"ErrNoArguments", "rename_artifact", nil, "invalid_arguments",
			"missing required property 'workspace_name'; missing required property 'artifact_name'; missing required property 'new_name'"},
		{"ErrArgumentsNotObject", "get_workspace", []any{"ws"},
			"invalid_arguments", "arguments must be a JSON object, got an array"},
		{"ErrNullIsAbsent", "get_workspace", map[string]any{"workspace_name": nil},
			"invalid_arguments", "missing required property 'workspace_name'"},
		{"ErrWrongTypeString", "get_workspace", map[string]any{"workspace_name": 7},
			"invalid_arguments", "property 'workspace_name' must be a string, got a number"},
		{"ErrWrongTypeInteger", "list_workspaces", map[string]any{"limit": "10"},
			"invalid_arguments", "property 'limit' must be an integer, got a string"},
		{"ErrFractionalInteger", "list_workspaces", map[string]any{"offset": 1.5},
			"invalid_arguments", "property 'offset' must be an integer, got a number"},
		{"ErrWrongTypeArray", "list_artifacts", map[string]any{"workspace_name": "ws", "artifact_names": "a"},
			"invalid_arguments", "property 'artifact_names' must be an array of strings, got a string"},
		{"ErrWrongTypeItem", "list_workspaces", map[string]any{"workspace_names": []any{"a", true}},
			"invalid_arguments", "property 'workspace_names' item 1 must be a string, got a boolean"},
		{"ErrUnknownProperty", "get_workspace", map[string]any{"workspace_name": "ws", "workspace_id": "x"},
			"invalid_arguments", "unknown property 'workspace_id'"},
		{"ErrBadEnum", "list_artifacts", map[string]any{"workspace_name": "ws", "states": []string{"RECORDED", "GONE"}},
			"invalid_arguments", "property 'states' item 1 must be one of 'RECORDED', 'MISSING_OBJECT', got 'GONE'"},
		{"ErrBadEnumVolume", "list_workspaces", map[string]any{"volume_states": []string{"ready"}},
			"invalid_arguments", "property 'volume_states' item 0 must be one of 'NONE', 'READY', got 'ready'"},
		{"ErrSchemaBeforeNames", "delete_artifact", map[string]any{"workspace_name": "bad name", "artifact_name": 1},
			"invalid_arguments", "property 'artifact_name' must be a string, got a number"},
		{"ErrInvalidWorkspaceName", "get_workspace", map[string]any{"workspace_name": "my ws"},
			"invalid_name", `workspace name "my ws" may only contain ASCII letters, digits, '-' and '_'`},
		{"ErrInvalidArtifactName", "rename_artifact", map[string]any{"workspace_name": "ws", "artifact_name": "a", "new_name": "b.txt"},
			"invalid_name", `artifact name "b.txt" may only contain ASCII letters, digits, '-' and '_'`},
		{"ErrInvalidNameInList", "list_artifacts", map[string]any{"workspace_name": "ws", "artifact_names": []string{""}},
			"invalid_name", "artifact name must not be empty"},
		{"ErrNamesBeforeLimits", "list_workspaces", map[string]any{"workspace_names": []string{"a/b"}, "limit": 0},
			"invalid_name", `workspace name "a/b" may only contain ASCII letters, digits, '-' and '_'`},
		{"ErrLimitZero", "list_workspaces", map[string]any{"limit": 0},
			"invalid_parameters", "list_workspaces parameters are not valid: 'limit' must be between 1 and 1000"},
		{"ErrLimitTooLarge", "list_artifacts", map[string]any{"workspace_name": "ws", "limit": 1001},
			"invalid_parameters", "list_artifacts parameters are not valid: 'limit' must be between 1 and 1000"},
		{"ErrLimitHuge", "list_artifacts", map[string]any{"workspace_name": "ws", "limit": 1e30},
			"invalid_parameters", "list_artifacts parameters are not valid: 'limit' must be between 1 and 1000"},
		{"ErrOffsetNegative", "list_workspaces", map[string]any{"offset": -1},
			"invalid_parameters", "list_workspaces parameters are not valid: 'offset' must be 0 or more"},
		{"ErrDescriptionTooLong", "upload_artifact", map[string]any{"workspace_name": "ws", "artifact_name": "a",
			"source_path": "/mnt/cairn/ws/a", "description": long},
			"invalid_parameters", "upload_artifact parameters are not valid: description is 4097 bytes; at most 4096 are allowed"},
		{"ErrWrongTypeBoolean", "write_file", map[string]any{"workspace_name": "ws", "path": "/mnt/cairn/ws/f", "content": "",
			"create_only": "yes"}, "invalid_arguments", "property 'create_only' must be a boolean, got a string"},
		{"ErrEditsNotArray", "edit_file", map[string]any{"workspace_name": "ws", "path": "/mnt/cairn/ws/f", "edits": "x"},
			"invalid_arguments", "property 'edits' must be an array of objects, got a string"},
		{"ErrEditNotObject", "edit_file", map[string]any{"workspace_name": "ws", "path": "/mnt/cairn/ws/f", "edits": []any{"x"}},
			"invalid_arguments", "property 'edits' item 0 must be an object, got a string"},
		{"ErrEditShape", "edit_file", map[string]any{"workspace_name": "ws", "path": "/mnt/cairn/ws/f",
			"edits": []any{map[string]any{"old_text": "a", "new_text": "b"}, map[string]any{"old_text": 1, "extra": true}}},
			"invalid_arguments", "property 'edits' item 1: unknown property 'extra'; property 'edits' item 1: " +
				"property 'old_text' must be a string, got a number; property 'edits' item 1: missing required property 'new_text'"},
		{"ErrEmptyFrom", "move_file", map[string]any{"workspace_name": "ws", "from": "", "to": "/mnt/cairn/ws/b"},
			"invalid_parameters", "move_file parameters are not valid: 'from' must not be empty"},
		{"ErrEmptyPath", "download_artifact", map[string]any{"workspace_name": "ws", "artifact_name": "a", "target_path": ""},
			"invalid_parameters", "download_artifact parameters are not valid: 'target_path' must not be empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := fails(t, call(t, c, tc.tool, tc.args), tc.reason)
			require.Equal(t, tc.reason+": "+tc.text, msg)
		})
	}

	t.Run("ErrManyProblemsAtOnce", func(t *testing.T) {
		msg := fails(t, call(t, c, "download_artifact", map[string]any{"workspace_name": 1, "extra": 2, "target_path": nil}),
			"invalid_arguments")
		require.Equal(t, "invalid_arguments: unknown property 'extra'; property 'workspace_name' must be a string, got a number; "+
			"missing required property 'artifact_name'; missing required property 'target_path'", msg)
	})

	t.Run("OKIntegerWithExponent", func(t *testing.T) {
		var out struct{ Workspaces []map[string]any }
		structured(t, call(t, c, "list_workspaces", map[string]any{"limit": 1e1, "offset": nil, "volume_states": nil}), &out)
		require.Len(t, out.Workspaces, 1)
	})

	t.Run("ErrUnknownToolIsProtocolError", func(t *testing.T) {
		req := mcpgo.CallToolRequest{}
		req.Params.Name = "delete_workspace"
		_, err := c.CallTool(t.Context(), req)
		require.Error(t, err)
	})
}

// TestProtocolVersions checks that clients of each protocol version the
// contract names, and of the library's newest, are served: initialise, then
// call a tool.
func TestProtocolVersions(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{Version: "1.2.3"})
	h.workspace(t, "ws", false)
	for _, version := range []string{mcpgo.ProtocolVersion20250326, mcpgo.ProtocolVersion20250618,
		mcpgo.ProtocolVersion20251125, mcpgo.LATEST_PROTOCOL_VERSION} {
		t.Run("OK"+version, func(t *testing.T) {
			t.Parallel()
			c := connect(t, h.url, version)
			require.Equal(t, version, c.ProtocolVersion())
			require.NotNil(t, c.GetServerCapabilities().Tools)
			resources := c.GetServerCapabilities().Resources
			require.NotNil(t, resources)
			require.False(t, resources.Subscribe)
			require.False(t, resources.ListChanged)
			require.Nil(t, c.GetServerCapabilities().Prompts)
			var out struct{ Workspace map[string]any }
			structured(t, call(t, c, "get_workspace", map[string]any{"workspace_name": "ws"}), &out)
			require.Equal(t, "ws", out.Workspace["name"])
		})
	}

	t.Run("OKServerInfo", func(t *testing.T) {
		status, body := post(t, h.url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",`+
			`"capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		var resp struct {
			Result mcpgo.InitializeResult `json:"result"`
		}
		require.NoError(t, json.Unmarshal(body, &resp))
		require.Equal(t, "cairn", resp.Result.ServerInfo.Name)
		require.Equal(t, "1.2.3", resp.Result.ServerInfo.Version)
		require.Equal(t, "2025-06-18", resp.Result.ProtocolVersion)
		require.Contains(t, resp.Result.Instructions, "/mnt/cairn/ws")
		require.Contains(t, resp.Result.Instructions, "READY")
		require.NotNil(t, resp.Result.Capabilities.Tools)
		require.False(t, resp.Result.Capabilities.Tools.ListChanged)
	})
}

// TestStateless checks the transport: a tools/call needs no initialize and
// no session, nothing is remembered, and there is no GET stream.
func TestStateless(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	h.workspace(t, "ws", false)

	t.Run("OKCallWithoutInitialize", func(t *testing.T) {
		status, body := post(t, h.url, `{"jsonrpc":"2.0","id":7,"method":"tools/call",`+
			`"params":{"name":"get_workspace","arguments":{"workspace_name":"nope"}}}`)
		require.Equal(t, http.StatusOK, status, "body: %s", body)
		var resp struct {
			ID     int                  `json:"id"`
			Error  json.RawMessage      `json:"error"`
			Result mcpgo.CallToolResult `json:"result"`
		}
		require.NoError(t, json.Unmarshal(body, &resp))
		require.Equal(t, 7, resp.ID)
		require.Nil(t, resp.Error, "a tool failure is not a JSON-RPC error")
		require.True(t, resp.Result.IsError)
		require.Equal(t, "workspace_not_found: workspace 'nope' does not exist", resultText(&resp.Result))
	})

	t.Run("OKNoSessionID", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, h.url, strings.NewReader(
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Empty(t, resp.Header.Get("Mcp-Session-Id"))
	})

	t.Run("OKNotificationAccepted", func(t *testing.T) {
		status, _ := post(t, h.url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		require.Equal(t, http.StatusAccepted, status)
	})

	t.Run("ErrNoGETStream", func(t *testing.T) {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, h.url, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.GreaterOrEqual(t, resp.StatusCode, 400)
		require.Less(t, resp.StatusCode, 500)
	})
}

// TestLogging checks that every call is logged once with the tool's name
// and arguments: at the configured level on success, at error level when
// it fails, with the reason.
func TestLogging(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{LogLevel: slog.LevelInfo})
	h.workspace(t, "ws", false)
	c := connect(t, h.url, "")
	ok(t, call(t, c, "get_workspace", map[string]any{"workspace_name": "ws"}))
	fails(t, call(t, c, "get_workspace", map[string]any{"workspace_name": "gone"}), "workspace_not_found")

	var calls []map[string]any
	for _, line := range h.logs.lines(t) {
		if line["tool"] != nil {
			calls = append(calls, line)
		}
	}
	require.Len(t, calls, 2)
	require.Equal(t, "INFO", calls[0]["level"])
	require.Equal(t, "get_workspace", calls[0]["tool"])
	require.JSONEq(t, `{"workspace_name":"ws"}`, calls[0]["arguments"].(string))
	require.Equal(t, "ERROR", calls[1]["level"])
	require.JSONEq(t, `{"workspace_name":"gone"}`, calls[1]["arguments"].(string))
	require.Equal(t, "workspace_not_found", calls[1]["reason"])
}
