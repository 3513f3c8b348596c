package mcp_test

import (
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/server/mcp"
)

// TestNoExecTool pins that agents never run commands over MCP: no tool
// execs, runs or opens a shell.
func TestNoExecTool(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	res, err := connect(t, h.url, "").ListTools(t.Context(), mcpgo.ListToolsRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, res.Tools)
	for _, tool := range res.Tools {
		for _, word := range []string{"exec", "shell", "run", "command"} {
			require.NotContains(t, strings.ToLower(tool.Name), word, "tool %s", tool.Name)
		}
	}
}
