package mcp_test

import (
	"encoding/base64"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/server/mcp"
)

// TestAgentFilesFlow is what an agent does with a workspace's files through
// a real MCP client: list what the previous tool call wrote, read it, pack
// the directory into one artifact and unpack it elsewhere.
func TestAgentFilesFlow(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	ws := h.workspace(t, "files", true)
	c := connect(t, h.url, "")
	in := func(script string) string {
		return strings.ReplaceAll(stacktest.RunInVolume(t, h.app, ws.VolumeName, script), "\r\n", "\n")
	}
	in(`mkdir -p /mnt/cairn/ws/out/sub && printf 'line one\nline two\n' > /mnt/cairn/ws/out/log.txt && ` +
		`printf '\001\002\377' > /mnt/cairn/ws/out/blob && ln -s log.txt /mnt/cairn/ws/out/latest`)

	var listing cairn.FileListing
	structured(t, call(t, c, "list_files", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out"}), &listing)
	require.Equal(t, "/mnt/cairn/ws/out", listing.Path)
	var names []string
	for _, e := range listing.Entries {
		names = append(names, e.Name+":"+e.Type)
	}
	require.Equal(t, []string{"blob:file", "latest:symlink", "log.txt:file", "sub:dir"}, names)
	require.Equal(t, "log.txt", *listing.Entries[1].LinkTarget)

	structured(t, call(t, c, "list_files", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out",
		"limit": 2}), &listing)
	require.Len(t, listing.Entries, 2)
	require.Equal(t, "latest", listing.NextAfter)
	structured(t, call(t, c, "list_files", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out",
		"after": listing.NextAfter}), &listing)
	require.Equal(t, "log.txt", listing.Entries[0].Name)

	text := call(t, c, "read_file", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out/log.txt", "offset": 5})
	require.False(t, text.IsError)
	require.Len(t, text.Content, 2)
	require.Equal(t, "bytes 5 to 18 of 18 of '/mnt/cairn/ws/out/log.txt'", text.Content[0].(mcpgo.TextContent).Text)
	res := text.Content[1].(mcpgo.EmbeddedResource).Resource.(mcpgo.TextResourceContents)
	require.Equal(t, "one\nline two\n", res.Text)
	require.Equal(t, "cairn://files/mnt/cairn/ws/out/log.txt", res.URI)

	bin := call(t, c, "read_file", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out/blob"})
	blob := bin.Content[1].(mcpgo.EmbeddedResource).Resource.(mcpgo.BlobResourceContents)
	raw, err := base64.StdEncoding.DecodeString(blob.Blob)
	require.NoError(t, err)
	require.Equal(t, []byte{1, 2, 0xff}, raw, "binary comes back as a blob")
	require.Equal(t, "application/octet-stream", blob.MIMEType)

	fails(t, call(t, c, "read_file", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out/latest"}), "path_is_symlink")
	fails(t, call(t, c, "read_file", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out/sub"}), "path_is_directory")
	fails(t, call(t, c, "read_file", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/out/log.txt",
		"length": 262145}), "invalid_parameters")
	fails(t, call(t, c, "list_files", map[string]any{"workspace_name": "files", "path": "/etc"}), "path_outside_mount")
	fails(t, call(t, c, "list_files", map[string]any{"workspace_name": "files", "path": "/mnt/cairn/ws/nope"}), "path_not_found")

	msg, link := stored(t, call(t, c, "upload_artifact", map[string]any{"workspace_name": "files", "source_path": "/mnt/cairn/ws/out",
		"artifact_name": "out", "format": "zip"}))
	require.Equal(t, "artifact 'out' recorded in workspace 'files' from '/mnt/cairn/ws/out'", msg)
	require.Equal(t, "cairn://workspaces/files/artifacts/out", link.URI)
	require.Equal(t, "application/zip", link.MIMEType)
	fails(t, call(t, c, "upload_artifact", map[string]any{"workspace_name": "files", "source_path": "/mnt/cairn/ws/out",
		"artifact_name": "rar", "format": "rar"}), "invalid_parameters")

	msg = ok(t, call(t, c, "unpack_artifact", map[string]any{"workspace_name": "files", "artifact_name": "out",
		"target_dir": "/mnt/cairn/ws/copy"}))
	require.Equal(t, "artifact 'out' of workspace 'files' unpacked into '/mnt/cairn/ws/copy': 4 entries, 21 bytes", msg)
	require.Equal(t, "line one\nline two\nlog.txt", in(`cat /mnt/cairn/ws/copy/log.txt && readlink /mnt/cairn/ws/copy/latest`))
	fails(t, call(t, c, "unpack_artifact", map[string]any{"workspace_name": "files", "artifact_name": "out",
		"target_dir": "/mnt/cairn/ws/copy"}), "target_exists")
}
