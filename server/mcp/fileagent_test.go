package mcp_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// filesAgent calls tools on one workspace with a READY volume as an agent
// does, and checks every successful answer of a tool that publishes an
// output schema against that schema, as tools/list sends it.
type filesAgent struct {
	h       *harness
	ws      *cairn.Workspace
	c       *client.Client
	schemas map[string]*jsonschema.Schema
}

// newFilesAgent makes the workspace name with a READY volume, runs script
// in it (from the mount root) to lay out its files, and connects.
func newFilesAgent(t *testing.T, h *harness, name, script string) *filesAgent {
	t.Helper()
	a := &filesAgent{h: h, ws: h.workspace(t, name, true), c: connect(t, h.url, ""), schemas: outputSchemas(t, h.url)}
	if script != "" {
		a.sh(t, script)
	}
	return a
}

// sh runs script in the volume from the mount root, as a tool container
// would, and returns what it printed.
func (a *filesAgent) sh(t *testing.T, script string) string {
	t.Helper()
	out := stacktest.RunInVolume(t, a.h.app, a.ws.VolumeName, "cd "+cairn.MountPath+" && "+script)
	return strings.ReplaceAll(out, "\r\n", "\n")
}

// call calls tool on the agent's workspace.
func (a *filesAgent) call(t *testing.T, tool string, args map[string]any) *mcpgo.CallToolResult {
	t.Helper()
	args = maps.Clone(args)
	args["workspace_name"] = a.ws.Name
	res := call(t, a.c, tool, args)
	if schema := a.schemas[tool]; schema != nil && !res.IsError {
		require.NotNil(t, res.StructuredContent, "%s publishes an output schema", tool)
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(mustJSON(res.StructuredContent)))
		require.NoError(t, err)
		require.NoError(t, schema.Validate(doc), "%s: the answer breaks its output schema", tool)
	}
	return res
}

// change calls a change tool that must succeed, decodes its
// structuredContent into v and returns its one sentence.
func (a *filesAgent) change(t *testing.T, tool string, args map[string]any, v any) string {
	t.Helper()
	res := a.call(t, tool, args)
	text := ok(t, res)
	require.NoError(t, json.Unmarshal(mustJSON(res.StructuredContent), v))
	return text
}

// read calls a read tool that must succeed and decodes its answer into v.
func (a *filesAgent) read(t *testing.T, tool string, args map[string]any, v any) {
	t.Helper()
	structured(t, a.call(t, tool, args), v)
}

// fails calls tool, which must fail with reason, and returns the text.
func (a *filesAgent) fails(t *testing.T, tool string, args map[string]any, reason string) string {
	t.Helper()
	return fails(t, a.call(t, tool, args), reason)
}

// info is the entry get_file_info answers for p.
func (a *filesAgent) info(t *testing.T, p string) cairn.FileEntry {
	t.Helper()
	var out struct {
		Path  string
		Entry cairn.FileEntry
	}
	a.read(t, "get_file_info", map[string]any{"path": p}, &out)
	return out.Entry
}

// outputSchemas compiles the output schema of every tool that has one,
// from the tools/list answer as sent.
func outputSchemas(t *testing.T, url string) map[string]*jsonschema.Schema {
	t.Helper()
	status, body := post(t, url, toolsList)
	require.Equal(t, http.StatusOK, status, "body: %s", body)
	var resp struct {
		Result struct {
			Tools []struct {
				Name         string          `json:"name"`
				OutputSchema json.RawMessage `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &resp))
	out := map[string]*jsonschema.Schema{}
	for _, tool := range resp.Result.Tools {
		if tool.OutputSchema == nil {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tool.OutputSchema))
		require.NoError(t, err)
		c := jsonschema.NewCompiler()
		require.NoError(t, c.AddResource(tool.Name+".json", doc))
		out[tool.Name], err = c.Compile(tool.Name + ".json")
		require.NoError(t, err, tool.Name)
	}
	require.NotEmpty(t, out)
	return out
}
