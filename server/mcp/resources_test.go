package mcp_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/mark3labs/mcp-go/client"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/mcp"
)

// TestResourceRead reads back, with resources/read, the URIs the tools hand
// out: an artifact's resource_link and read_file's volume file, whole, text
// as text and binary as a blob; and refuses, each with its JSON-RPC code and
// reason, what is too large, missing, gone from the store or corrupt.
func TestResourceRead(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "res", true)
	c := connect(t, h.url, mcpgo.ProtocolVersion20251125)
	require.NotNil(t, c.GetServerCapabilities().Resources)

	notes := h.artifact(t, ws, "notes", "hello\n", nil)
	item := readResource(t, c, "cairn://workspaces/res/artifacts/notes").(mcpgo.TextResourceContents)
	require.Equal(t, mcpgo.TextResourceContents{URI: "cairn://workspaces/res/artifacts/notes", MIMEType: notes.MIMEType,
		Text: "hello\n"}, item)

	raw := []byte{0, 1, 0xff, 'x'}
	h.artifact(t, ws, "bin", string(raw), nil)
	blob := readResource(t, c, "cairn://workspaces/res/artifacts/bin").(mcpgo.BlobResourceContents)
	require.Equal(t, base64.StdEncoding.EncodeToString(raw), blob.Blob)

	t.Run("OKLinkOfAToolReadsBack", func(t *testing.T) {
		stacktest.RunInVolume(t, h.app, ws.VolumeName, `mkdir -p '/mnt/cairn/ws/out dir' && printf 'a,b\n1,2\n' > '/mnt/cairn/ws/out dir/t.csv'`)
		_, link := stored(t, call(t, c, "upload_artifact", map[string]any{"workspace_name": "res",
			"source_path": "/mnt/cairn/ws/out dir/t.csv", "artifact_name": "table"}))
		require.Equal(t, "a,b\n1,2\n", readResource(t, c, link.URI).(mcpgo.TextResourceContents).Text)

		read := call(t, c, "read_file", map[string]any{"workspace_name": "res", "path": "/mnt/cairn/ws/out dir/t.csv", "length": 2})
		uri := read.Content[1].(mcpgo.EmbeddedResource).Resource.(mcpgo.TextResourceContents).URI
		require.Equal(t, "cairn://res/mnt/cairn/ws/out%20dir/t.csv", uri)
		whole := readResource(t, c, uri).(mcpgo.TextResourceContents)
		require.Equal(t, mcpgo.TextResourceContents{URI: uri, MIMEType: "text/plain; charset=utf-8", Text: "a,b\n1,2\n"}, whole,
			"the resource is the whole file, where the tool read two bytes")
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		h.artifact(t, ws, "big", strings.Repeat("x", cairn.MaxFileReadBytes+1), nil)
		requireReadError(t, c, "cairn://workspaces/res/artifacts/big", mcpgo.ErrInvalidParams,
			"object_too_large: artifact 'big' is 1048577 bytes, more than a resource read returns (1048576); "+
				"download_artifact brings it into a volume, where read_file reads it in parts")
		stacktest.RunInVolume(t, h.app, ws.VolumeName, `head -c 1048577 /dev/zero > /mnt/cairn/ws/big`)
		requireReadError(t, c, "cairn://res/mnt/cairn/ws/big", mcpgo.ErrInvalidParams,
			"range_too_large: '/mnt/cairn/ws/big' is 1048577 bytes, more than a resource read returns (1048576); read_file reads it in parts")
	})
	t.Run("ErrNotThere", func(t *testing.T) {
		requireReadError(t, c, "cairn://workspaces/res/artifacts/nope", mcpgo.ErrResourceNotFound,
			"artifact_not_found: workspace 'res' has no artifact named 'nope'")
		requireReadError(t, c, "cairn://nope/mnt/cairn/ws/x", mcpgo.ErrResourceNotFound, "workspace_not_found: workspace 'nope' does not exist")
		requireReadError(t, c, "cairn://res/mnt/cairn/ws/nope", mcpgo.ErrResourceNotFound, "path_not_found:")
		requireReadError(t, c, "cairn://workspaces/res/artifacts/a%2Fb", mcpgo.ErrInvalidParams, "invalid_name:")
		requireReadError(t, c, "cairn://res/mnt/cairn/ws/../../../etc/passwd", mcpgo.ErrInvalidParams, "path_outside_mount:")
		requireReadError(t, c, "file:///etc/passwd", mcpgo.ErrResourceNotFound, "handler not found")
	})
	t.Run("ErrGoneFromTheStore", func(t *testing.T) {
		gone := h.artifact(t, ws, "gone", "soon gone", nil)
		_, err := h.sdk.DeleteObject(t.Context(), &awss3.DeleteObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(gone.ObjectKey)})
		require.NoError(t, err)
		requireReadError(t, c, "cairn://workspaces/res/artifacts/gone", mcpgo.ErrResourceNotFound, "object_missing:")
		got, err := h.svc.GetArtifact(t.Context(), gone.ID, cairn.ArtifactGet{})
		require.NoError(t, err)
		require.Equal(t, cairn.ArtifactMissingObject, got.Artifact.State, "the read flags what the store lost")
	})
	t.Run("ErrCorrupt", func(t *testing.T) {
		// An artifact stored from a volume file carries the file's SHA-256.
		stacktest.RunInVolume(t, h.app, ws.VolumeName, `printf original > /mnt/cairn/ws/orig`)
		stored(t, call(t, c, "upload_artifact", map[string]any{"workspace_name": "res", "source_path": "/mnt/cairn/ws/orig",
			"artifact_name": "bad"}))
		bad, err := h.svc.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{"bad"}})
		require.NoError(t, err)
		require.Len(t, bad, 1)
		require.NotNil(t, bad[0].SHA256B64)
		_, err = h.sdk.PutObject(t.Context(), &awss3.PutObjectInput{Bucket: aws.String(h.bucket), Key: aws.String(bad[0].ObjectKey),
			Body: strings.NewReader("tampered")}) // the same length
		require.NoError(t, err)
		requireReadError(t, c, "cairn://workspaces/res/artifacts/bad", mcpgo.ErrInternalError,
			"checksum_mismatch: the store's bytes of artifact "+bad[0].ID+" do not match its SHA-256")
	})
	t.Run("ErrNotFoundIsInvalidParamsSince20260728", func(t *testing.T) {
		// The HTTP status is what 2026-07-28 prescribes for -32602.
		uri := "cairn://workspaces/res/artifacts/nope"
		status, body := post(t, h.url, `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"`+uri+`",`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},`+
			`"io.modelcontextprotocol/clientCapabilities":{}}}}`,
			"MCP-Protocol-Version", "2026-07-28", "Mcp-Method", "resources/read", "Mcp-Name", uri)
		require.Equal(t, http.StatusBadRequest, status, "2026-07-28 answers -32602 with HTTP 400: %s", body)
		var resp struct {
			Error struct {
				Code    int               `json:"code"`
				Message string            `json:"message"`
				Data    map[string]string `json:"data"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(body, &resp), "%s", body)
		require.Equal(t, mcpgo.INVALID_PARAMS, resp.Error.Code, "%s", body)
		require.Equal(t, "artifact_not_found", resp.Error.Data["reason"])
		require.Equal(t, "artifact_not_found: workspace 'res' has no artifact named 'nope'", resp.Error.Message)
	})
	t.Run("OKTemplatesListed", func(t *testing.T) {
		list, err := c.ListResourceTemplates(t.Context(), mcpgo.ListResourceTemplatesRequest{})
		require.NoError(t, err)
		var templates []string
		for _, tpl := range list.ResourceTemplates {
			templates = append(templates, tpl.URITemplate.Raw())
		}
		require.ElementsMatch(t, []string{"cairn://workspaces/{workspace}/artifacts/{artifact}",
			"cairn://{workspace}/mnt/cairn/ws/{+path}"}, templates)
	})
}

// readResource reads uri and returns its one content item.
func readResource(t testing.TB, c *client.Client, uri string) mcpgo.ResourceContents {
	t.Helper()
	res, err := c.ReadResource(t.Context(), mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: uri}})
	require.NoError(t, err, uri)
	require.Len(t, res.Contents, 1, uri)
	return res.Contents[0]
}

// requireReadError reads uri and checks the JSON-RPC error: its code (as
// the client's sentinel) and the start of its message.
func requireReadError(t testing.TB, c *client.Client, uri string, code error, message string) {
	t.Helper()
	_, err := c.ReadResource(t.Context(), mcpgo.ReadResourceRequest{Params: mcpgo.ReadResourceParams{URI: uri}})
	require.ErrorIs(t, err, code, uri)
	require.Contains(t, err.Error(), ": "+message, uri)
}
