package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"unicode/utf8"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// maxToolRead bounds one read_file: what an agent's context can take.
const maxToolRead = 256 << 10

var listFilesTool = definition{
	name:  "list_files",
	scope: "read",
	description: "List a directory of the workspace volume: each entry's name, type (file, dir, symlink or other), size, " +
		"mode and modification time, and a symlink's target (symlinks are reported, never followed). Names come in byte order, " +
		"at most limit per call; pass the returned next_after as after to get the next page. A path that is not a directory " +
		"lists as its one entry." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path of the directory, /mnt/cairn/ws itself or inside it, e.g. /mnt/cairn/ws/out."),
		optionalInteger("limit", "Return at most this many entries, 1 to 1000 (default 200)."),
		optionalString("after", "Only list names after this one (the next_after of the previous page)."),
	},
	output: &object{props: []property{
		{name: "path", required: true, schema: leaf("string", "The directory listed.")},
		{name: "entries", required: true, schema: arrayOf(fileItem, "The entries of this page, in byte order of names.")},
		{name: "next_after", schema: leaf("string", "Present when more entries follow: pass it as after.")},
	}},
	annotations: readOnly(),
}

var readFileTool = definition{
	name:  "read_file",
	scope: "read",
	description: "Read part of a regular file of the workspace volume, at most 262144 bytes per call from offset. " +
		"UTF-8 text comes back as text; anything else as a base64 blob with its MIME type. To take a whole large file " +
		"elsewhere, store it with upload_artifact instead." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path of the file, inside /mnt/cairn/ws, e.g. /mnt/cairn/ws/out/log.txt."),
		optionalInteger("offset", "First byte to read, 0 or more (default 0)."),
		optionalInteger("length", "Bytes to read, 1 to 262144 (default 262144)."),
	},
	annotations: readOnly(),
}

var unpackArtifactTool = definition{
	name:  "unpack_artifact",
	scope: "write",
	description: "Unpack an archive artifact (tar.gz or zip) into a NEW directory of the workspace volume. Every entry is " +
		"checked before the directory appears: unsafe paths, links leaving the directory, device files, too many entries, " +
		"too many bytes or a suspicious compression ratio refuse the whole archive, and nothing is written. The target " +
		"directory must not exist; its parent must." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("artifact_name", "Name of the archive artifact."),
		requiredString("target_dir", "Absolute path of the directory to create, inside /mnt/cairn/ws, e.g. /mnt/cairn/ws/src."),
	},
	annotations: action(false, false),
}

var fileItem = object{props: []property{
	{name: "name", required: true, schema: leaf("string", "Name of the entry.")},
	{name: "type", required: true, schema: leaf("string", "file, dir, symlink or other (a FIFO, socket or device).")},
	{name: "size", required: true, schema: leaf("integer", "Size in bytes.")},
	{name: "mode", required: true, schema: leaf("string", "Permission bits in octal, e.g. 0644.")},
	{name: "mtime", required: true, schema: leaf("string", "Last modification (RFC 3339).")},
	{name: "link_target", schema: leaf("string", "A symlink's target, as written; never followed.")},
	{name: "etag", schema: leaf("string", "A regular file's version: it changes whenever the file is written, replaced, "+
		"resized or has its mode or owner changed. write_file takes it as if_match.")},
}}

// fileArgs names one path of a workspace.
type fileArgs struct {
	WorkspaceName string `json:"workspace_name"`
	Path          string `json:"path"`
}

func (a fileArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	return checkPath(tool, "path", a.Path)
}

type listFilesArgs struct {
	fileArgs
	Limit *int   `json:"limit"`
	After string `json:"after"`
}

func (a listFilesArgs) check(tool string) error {
	if err := a.fileArgs.check(tool); err != nil {
		return err
	}
	return checkLimit(tool, a.Limit, cairn.MaxFileListLimit)
}

func (t *toolbox) listFiles(ctx context.Context, a listFilesArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	listing, err := t.svc.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: a.Path, After: a.After, Limit: deref0(a.Limit)})
	if err != nil {
		return nil, err
	}
	return structured(listing)
}

type readFileArgs struct {
	fileArgs
	Offset *int `json:"offset"`
	Length *int `json:"length"`
}

func (a readFileArgs) check(tool string) error {
	if err := a.fileArgs.check(tool); err != nil {
		return err
	}
	if a.Offset != nil && *a.Offset < 0 {
		return badParameters(tool, "'offset' must be 0 or more")
	}
	if a.Length != nil && (*a.Length < 1 || *a.Length > maxToolRead) {
		return badParameters(tool, "'length' must be between 1 and %d", maxToolRead)
	}
	return nil
}

// readFile answers text as text and anything else as a blob resource, each
// after a line saying which bytes of how large a file these are.
func (t *toolbox) readFile(ctx context.Context, a readFileArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	p := cairn.FileReadParams{Path: a.Path, Length: maxToolRead}
	if a.Offset != nil {
		p.Offset = int64(*a.Offset)
	}
	if a.Length != nil {
		p.Length = int64(*a.Length)
	}
	c, err := t.svc.ReadFile(ctx, ws.ID, p)
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("bytes %d to %d of %d of '%s'", c.Offset, c.Offset+int64(len(c.Data)), c.Size, a.Path)
	if utf8.Valid(c.Data) {
		return mcpgo.NewToolResultResource(head, mcpgo.TextResourceContents{
			URI: fileURI(ws.Name, a.Path), MIMEType: "text/plain; charset=utf-8", Text: string(c.Data)}), nil
	}
	return mcpgo.NewToolResultResource(head, mcpgo.BlobResourceContents{
		URI: fileURI(ws.Name, a.Path), MIMEType: c.ContentType, Blob: base64.StdEncoding.EncodeToString(c.Data)}), nil
}

// fileURI names a volume file as a resource: cairn://WORKSPACE/PATH.
func fileURI(workspace, path string) string {
	return (&url.URL{Scheme: "cairn", Host: workspace, Path: path}).String()
}

type unpackArgs struct {
	artifactArgs
	TargetDir string `json:"target_dir"`
}

func (a unpackArgs) check(tool string) error {
	if err := a.artifactArgs.check(tool); err != nil {
		return err
	}
	return checkPath(tool, "target_dir", a.TargetDir)
}

func (t *toolbox) unpackArtifact(ctx context.Context, a unpackArgs) (*mcpgo.CallToolResult, error) {
	ws, art, err := t.resolve(ctx, a.artifactArgs)
	if err != nil {
		return nil, err
	}
	res, err := t.svc.UnpackArtifact(ctx, art.ID, a.TargetDir)
	if err != nil {
		return nil, err
	}
	return text("artifact '%s' of workspace '%s' unpacked into '%s': %d entries, %d bytes",
		art.Name, ws.Name, res.TargetDir, res.Entries, res.Bytes)
}
