package mcp_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/mcp"
)

// TestOutputSchemas checks that every tool tools/list names publishes an
// output schema of the one form: an object whose properties all have a
// type and a description, with its required list, that a JSON Schema
// compiler accepts.
func TestOutputSchemas(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	tools := listedOutputSchemas(t, h.url)
	require.Len(t, tools, 25)
	for _, tool := range tools {
		t.Run(tool.Name, func(t *testing.T) {
			require.NotEmpty(t, tool.OutputSchema, "no output schema")
			var schema map[string]any
			require.NoError(t, json.Unmarshal(tool.OutputSchema, &schema))
			require.Equal(t, "object", schema["type"])
			requireDescribed(t, "", schema)
			_, err := compileSchema(tool.Name, tool.OutputSchema, false)
			require.NoError(t, err)
		})
	}
}

// requireDescribed checks an object schema at path: properties, a
// required list naming only them, and each property with a type and a
// description; nested objects and array items alike.
func requireDescribed(t *testing.T, path string, schema map[string]any) {
	t.Helper()
	props, isMap := schema["properties"].(map[string]any)
	require.True(t, isMap, "%s: properties", path)
	required, isList := schema["required"].([]any)
	require.True(t, isList, "%s: required must be a list", path)
	for _, name := range required {
		require.Contains(t, props, name, "%s: required names an unknown property", path)
	}
	for name, p := range props {
		prop := p.(map[string]any)
		at := path + "." + name
		require.NotEmpty(t, prop["type"], "%s: type", at)
		if _, nested := prop["properties"]; nested {
			requireDescribed(t, at, prop)
			continue // an object item has no description of its own
		}
		require.NotEmpty(t, prop["description"], "%s: description", at)
		if items, isObject := prop["items"].(map[string]any); isObject && items["properties"] != nil {
			requireDescribed(t, at+"[]", items)
		}
	}
}

// compileSchema compiles a tool's output schema. With closed, every object
// in it also refuses properties it does not declare, so that a validation
// proves the answer says nothing the schema does not.
func compileSchema(tool string, raw json.RawMessage, closed bool) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	if closed {
		closeObjects(doc)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(tool+".json", doc); err != nil {
		return nil, err
	}
	return c.Compile(tool + ".json")
}

func closeObjects(v any) {
	m, isMap := v.(map[string]any)
	if !isMap {
		return
	}
	if props, has := m["properties"].(map[string]any); has {
		if _, set := m["additionalProperties"]; !set {
			m["additionalProperties"] = false
		}
		for _, p := range props {
			closeObjects(p)
		}
	}
	closeObjects(m["items"])
}

// TestStructuredResults calls each tool that answered text only before it
// published an output schema, on a READY volume over the real services,
// and checks its answer: structuredContent valid against the schema
// tools/list publishes (closed: no undeclared property either), saying
// what the test expects; the sentence clients that read text only always
// got; and the content items beside it — a resource_link to the artifact
// for the tools that store one, the file's bytes for read_file.
func TestStructuredResults(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "out", true)
	c := connect(t, h.url, "")
	stacktest.RunInVolume(t, h.app, ws.VolumeName, `cd /mnt/cairn/ws && mkdir -p dir/tree/sub && `+
		`printf 'hello\n' > dir/a.txt && printf '\001\002\377' > dir/b.bin && printf 'x' > dir/tree/sub/x.txt && `+
		`printf 'version two' > dir/v2.txt`)

	schemas := map[string]*jsonschema.Schema{}
	for _, tool := range listedOutputSchemas(t, h.url) {
		s, err := compileSchema(tool.Name, tool.OutputSchema, true)
		require.NoError(t, err, tool.Name)
		schemas[tool.Name] = s
	}

	const uri = "cairn://workspaces/out/artifacts/"
	// link checks the resource_link of a tool that stored an artifact.
	link := func(name, desc string, size int64) func(*testing.T, *mcpgo.CallToolResult, map[string]any) {
		return func(t *testing.T, res *mcpgo.CallToolResult, out map[string]any) {
			t.Helper()
			require.Len(t, res.Content, 2, "the sentence, then the link")
			l, isLink := res.Content[1].(mcpgo.ResourceLink)
			require.True(t, isLink, "content[1] is %T", res.Content[1])
			require.Equal(t, "resource_link", l.Type)
			require.Equal(t, uri+name, l.URI)
			require.Equal(t, out["uri"], l.URI)
			require.Equal(t, name, l.Name)
			require.Equal(t, desc, l.Description)
			require.NotEmpty(t, l.MIMEType)
			require.Equal(t, out["mime_type"], l.MIMEType)
			require.NotNil(t, l.Size)
			require.Equal(t, size, *l.Size)
		}
	}
	// file checks the resource item read_file answers besides its sentence.
	file := func(t *testing.T, res *mcpgo.CallToolResult, out map[string]any) {
		t.Helper()
		require.Len(t, res.Content, 2, "the sentence, then the bytes")
		switch r := res.Content[1].(mcpgo.EmbeddedResource).Resource.(type) {
		case mcpgo.TextResourceContents:
			require.Equal(t, "text", out["encoding"])
			require.Equal(t, out["content"], r.Text)
			require.Equal(t, out["uri"], r.URI)
			require.Equal(t, out["mime_type"], r.MIMEType)
		case mcpgo.BlobResourceContents:
			require.Equal(t, "base64", out["encoding"])
			require.Equal(t, out["content"], r.Blob)
			require.Equal(t, out["uri"], r.URI)
			require.Equal(t, out["mime_type"], r.MIMEType)
		default:
			t.Fatalf("content[1] holds %T", r)
		}
	}
	// sentence checks the one text item of the other tools.
	sentence := func(t *testing.T, res *mcpgo.CallToolResult, _ map[string]any) {
		t.Helper()
		require.Len(t, res.Content, 1)
	}

	blob := base64.StdEncoding.EncodeToString([]byte{1, 2, 0xff})
	// The calls run in order: each works on what the previous ones left.
	for _, tc := range []struct {
		name, tool string
		args       map[string]any
		text       string
		want       string // JSON: the properties of structuredContent to compare, nested objects in part
		content    func(*testing.T, *mcpgo.CallToolResult, map[string]any)
	}{
		{"UploadFile", "upload_artifact",
			map[string]any{"source_path": "/mnt/cairn/ws/dir/a.txt", "artifact_name": "notes", "description": "kept"},
			"artifact 'notes' recorded in workspace 'out' from '/mnt/cairn/ws/dir/a.txt'",
			`{"artifact":{"name":"notes","description":"kept","state":"RECORDED"},"uri":"` + uri + `notes",
			  "source_path":"/mnt/cairn/ws/dir/a.txt","size":6}`,
			link("notes", "kept", 6)},
		{"UploadDirectory", "upload_artifact",
			map[string]any{"source_path": "/mnt/cairn/ws/dir/tree", "artifact_name": "tree", "format": "tar.gz"},
			"artifact 'tree' recorded in workspace 'out' from '/mnt/cairn/ws/dir/tree'",
			`{"artifact":{"name":"tree","description":null,"state":"RECORDED"},"uri":"` + uri + `tree",
			  "source_path":"/mnt/cairn/ws/dir/tree","mime_type":"application/gzip"}`,
			nil}, // the archive's size is the packer's: checked against the link below
		{"Update", "update_artifact",
			map[string]any{"artifact_name": "notes", "source_path": "/mnt/cairn/ws/dir/v2.txt"},
			"artifact 'notes' of workspace 'out' updated from '/mnt/cairn/ws/dir/v2.txt'",
			`{"artifact":{"name":"notes","description":"kept","state":"RECORDED"},"uri":"` + uri + `notes",
			  "source_path":"/mnt/cairn/ws/dir/v2.txt","size":11}`,
			link("notes", "kept", 11)},
		{"Download", "download_artifact",
			map[string]any{"artifact_name": "notes", "target_path": "/mnt/cairn/ws/back.txt"},
			"artifact 'notes' of workspace 'out' downloaded to '/mnt/cairn/ws/back.txt'",
			`{"artifact":{"name":"notes","state":"RECORDED"},"target_path":"/mnt/cairn/ws/back.txt","bytes":11}`,
			sentence},
		{"ReadPart", "read_file",
			map[string]any{"path": "/mnt/cairn/ws/dir/a.txt", "offset": 1, "length": 2},
			"bytes 1 to 3 of 6 of '/mnt/cairn/ws/dir/a.txt'",
			`{"path":"/mnt/cairn/ws/dir/a.txt","uri":"cairn://out/mnt/cairn/ws/dir/a.txt","offset":1,"length":2,"size":6,
			  "eof":false,"encoding":"text","mime_type":"text/plain; charset=utf-8","content":"el"}`,
			file},
		{"ReadToEnd", "read_file",
			map[string]any{"path": "/mnt/cairn/ws/back.txt", "offset": 8},
			"bytes 8 to 11 of 11 of '/mnt/cairn/ws/back.txt'",
			`{"offset":8,"length":3,"size":11,"eof":true,"encoding":"text","content":"two"}`,
			file},
		{"ReadBinary", "read_file",
			map[string]any{"path": "/mnt/cairn/ws/dir/b.bin"},
			"bytes 0 to 3 of 3 of '/mnt/cairn/ws/dir/b.bin'",
			`{"offset":0,"length":3,"size":3,"eof":true,"encoding":"base64","mime_type":"application/octet-stream",
			  "content":"` + blob + `"}`,
			file},
		{"Unpack", "unpack_artifact",
			map[string]any{"artifact_name": "tree", "target_dir": "/mnt/cairn/ws/copy"},
			"artifact 'tree' of workspace 'out' unpacked into '/mnt/cairn/ws/copy': 2 entries, 1 bytes",
			`{"artifact":{"name":"tree","state":"RECORDED"},"target_dir":"/mnt/cairn/ws/copy","entries":2,"bytes":1}`,
			sentence},
		{"Rename", "rename_artifact",
			map[string]any{"artifact_name": "notes", "new_name": "final"},
			"artifact 'notes' of workspace 'out' renamed to 'final'",
			`{"artifact":{"name":"final","description":"kept","state":"RECORDED"},"previous_name":"notes"}`,
			sentence},
		{"Delete", "delete_artifact",
			map[string]any{"artifact_name": "final"},
			"artifact 'final' deleted from workspace 'out'",
			`{"artifact":{"name":"final","description":"kept","state":"RECORDED"}}`,
			sentence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.args["workspace_name"] = "out"
			res := call(t, c, tc.tool, tc.args)
			require.False(t, res.IsError, "result: %s", mustJSON(res.Content))
			require.NotNil(t, res.StructuredContent, "structuredContent")
			raw := mustJSON(res.StructuredContent)

			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			require.NoError(t, err)
			require.NoError(t, schemas[tc.tool].Validate(doc), "%s answered %s", tc.tool, raw)

			text, isText := res.Content[0].(mcpgo.TextContent)
			require.True(t, isText, "content[0] is %T", res.Content[0])
			require.Equal(t, tc.text, text.Text, "the sentence of text-only clients is unchanged")

			var out, want map[string]any
			require.NoError(t, json.Unmarshal(raw, &out))
			require.NoError(t, json.Unmarshal([]byte(tc.want), &want))
			requireSubset(t, "", want, out)
			if tc.content != nil {
				tc.content(t, res, out)
			} else {
				link("tree", "", int64(out["size"].(float64)))(t, res, out)
			}
		})
	}
	require.Equal(t, "version two", stacktest.RunInVolume(t, h.app, ws.VolumeName, `cat /mnt/cairn/ws/back.txt`))
}

// requireSubset checks that got has every property of want with its value;
// an object in want is compared the same way, in part.
func requireSubset(t *testing.T, path string, want, got map[string]any) {
	t.Helper()
	for k, w := range want {
		g, has := got[k]
		require.True(t, has, "%s.%s is missing", path, k)
		if wm, isMap := w.(map[string]any); isMap {
			gm, isMap := g.(map[string]any)
			require.True(t, isMap, "%s.%s: want an object, got %v", path, k, g)
			requireSubset(t, path+"."+k, wm, gm)
			continue
		}
		require.Equal(t, w, g, "%s.%s", path, k)
	}
}

// listedTool is a tool of tools/list with its output schema as sent.
type listedTool struct {
	Name         string          `json:"name"`
	OutputSchema json.RawMessage `json:"outputSchema"`
}

// listedOutputSchemas asks the endpoint at url for tools/list.
func listedOutputSchemas(t *testing.T, url string) []listedTool {
	t.Helper()
	status, body := post(t, url, toolsList)
	require.Equal(t, http.StatusOK, status, "body: %s", body)
	var resp struct {
		Result struct {
			Tools []listedTool `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &resp))
	return resp.Result.Tools
}
