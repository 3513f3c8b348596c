package mcp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/auth"
	"github.com/cairn-dev/cairn/server/mcp"
	"github.com/cairn-dev/cairn/server/route"
)

// Behind the auth guard, each tool call also needs read or write (the
// endpoint itself needs mcp), and the token's name is the audit actor.
func TestToolScopes(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hash := func(token string) string {
		sum := sha256.Sum256([]byte(token))
		return hex.EncodeToString(sum[:])
	}
	guard, err := auth.New(auth.Config{
		Tokens: []auth.Token{
			{Name: "reader", SHA256: hash("reader-token"), Scopes: []route.Scope{route.MCP, route.Read}},
			{Name: "writer", SHA256: hash("writer-token"), Scopes: []route.Scope{route.MCP, route.Read, route.Write}},
			{Name: "no-mcp", SHA256: hash("plain-token"), Scopes: []route.Scope{route.Read, route.Write}},
			{Name: "mcp-only", SHA256: hash("mcp-token"), Scopes: []route.Scope{route.MCP}},
		},
	})
	require.NoError(t, err)
	handler, err := guard.Mount("", mcp.Routes(h.svc, mcp.Config{Enable: true, Logger: slog.New(slog.DiscardHandler)}))
	require.NoError(t, err)
	url := serve(t, handler)
	ws := h.workspace(t, "scoped", false)
	h.artifact(t, ws, "a", "body", nil)

	as := func(token string) *client.Client {
		c, err := client.NewStreamableHttpClient(url+mcp.Path,
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + token}))
		require.NoError(t, err)
		require.NoError(t, c.Start(t.Context()))
		t.Cleanup(func() { _ = c.Close() }) // the server may already be gone
		req := mcpgo.InitializeRequest{}
		req.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
		req.Params.ClientInfo = mcpgo.Implementation{Name: "cairn-test", Version: "1"}
		_, err = c.Initialize(t.Context(), req)
		require.NoError(t, err)
		return c
	}
	reader, writer := as("reader-token"), as("writer-token")

	ok(t, call(t, reader, "list_artifacts", map[string]any{"workspace_name": "scoped"}))
	text := fails(t, call(t, reader, "rename_artifact",
		map[string]any{"workspace_name": "scoped", "artifact_name": "a", "new_name": "b"}), "forbidden")
	require.Equal(t, "forbidden: token 'reader' lacks scope 'write'", text)

	t.Run("ErrReaderCannotChangeFiles", func(t *testing.T) {
		p := cairn.MountPath + "/f"
		for tool, args := range map[string]map[string]any{
			"write_file":       {"path": p, "content": "x"},
			"edit_file":        {"path": p, "edits": []map[string]any{{"old_text": "x", "new_text": "y"}}},
			"create_directory": {"path": p},
			"move_file":        {"from": p, "to": p + "2"},
			"delete_path":      {"path": p},
		} {
			args["workspace_name"] = "scoped"
			text := fails(t, call(t, reader, tool, args), "forbidden")
			require.Equal(t, "forbidden: token 'reader' lacks scope 'write'", text, tool)
		}
	})
	t.Run("OKReaderFindsFiles", func(t *testing.T) {
		// The workspace has no volume: getting that far proves the scope was enough.
		for tool, args := range map[string]map[string]any{
			"get_file_info":  {"path": cairn.MountPath},
			"search_files":   {"glob": "*"},
			"directory_tree": {},
		} {
			args["workspace_name"] = "scoped"
			fails(t, call(t, reader, tool, args), "volume_not_ready")
		}
	})

	t.Run("ErrWorkspaceToolsNeedTheirScopes", func(t *testing.T) {
		text := fails(t, call(t, reader, "create_workspace", map[string]any{"workspace_name": "mine"}), "forbidden")
		require.Equal(t, "forbidden: token 'reader' lacks scope 'write'", text)
		// Provisioning is admin's, as POST /v1/workspaces/{id}/volume is.
		text = fails(t, call(t, writer, "provision_volume", map[string]any{"workspace_name": "scoped"}), "forbidden")
		require.Equal(t, "forbidden: token 'writer' lacks scope 'admin'", text)
	})

	t.Run("ResourceReadsNeedRead", func(t *testing.T) {
		uri := "cairn://workspaces/scoped/artifacts/a"
		require.Equal(t, "body", readResource(t, reader, uri).(mcpgo.TextResourceContents).Text)
		requireReadError(t, as("mcp-token"), uri, mcpgo.ErrInvalidParams, "forbidden: token 'mcp-only' lacks scope 'read'")
	})

	ok(t, call(t, writer, "rename_artifact", map[string]any{"workspace_name": "scoped", "artifact_name": "a", "new_name": "b"}))
	var actor string
	require.NoError(t, h.db.QueryRow(t.Context(),
		`SELECT actor FROM audit_system_events WHERE type = 'RENAME_ARTIFACT'`).Scan(&actor))
	require.Equal(t, "writer", actor, "the token's name is the audit actor")

	noMCP, err := client.NewStreamableHttpClient(url+mcp.Path,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer plain-token"}))
	require.NoError(t, err)
	require.NoError(t, noMCP.Start(t.Context()))
	defer func() { _ = noMCP.Close() }() // refused at start; nothing to close cleanly
	init := mcpgo.InitializeRequest{}
	init.Params.ProtocolVersion = mcpgo.LATEST_PROTOCOL_VERSION
	_, err = noMCP.Initialize(t.Context(), init)
	require.Error(t, err, "the endpoint needs the mcp scope")
}
