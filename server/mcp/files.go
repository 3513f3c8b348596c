package mcp

import (
	"context"
	"fmt"
	"net/url"

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
	output:      &readOutput,
	annotations: readOnly(),
}

// readOutput is what read_file answers: readResult.
var readOutput = object{props: []property{
	{name: "path", required: true, schema: leaf("string", "The file read, as given.")},
	{name: "uri", required: true, schema: leaf("string", "The file as a resource, cairn://<workspace_name><path>: "+
		"the uri of the resource content item.")},
	{name: "offset", required: true, schema: leaf("integer", "First byte read.")},
	{name: "length", required: true, schema: leaf("integer", "Bytes read: fewer than asked when the file ends first.")},
	{name: "size", required: true, schema: leaf("integer", "Size of the whole file in bytes.")},
	{name: "eof", required: true, schema: leaf("boolean", "True when the read reached the end of the file "+
		"(offset + length is size or more); otherwise read on from offset + length.")},
	{name: "encoding", required: true, schema: leaf("string", "text when the bytes read are UTF-8 (content is that text), "+
		"else base64 (content is the bytes in standard base64).")},
	{name: "mime_type", required: true, schema: leaf("string", "text/plain; charset=utf-8 for text, "+
		"else the type sniffed from the bytes, e.g. application/octet-stream.")},
	{name: "content", required: true, schema: leaf("string", "The bytes read, as encoding says.")},
}}

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
	output: &object{props: []property{
		{name: "artifact", required: true, schema: artifactItem},
		{name: "target_dir", required: true, schema: leaf("string", "The directory created.")},
		{name: "entries", required: true, schema: leaf("integer", "Directories, files and symlinks written.")},
		{name: "bytes", required: true, schema: leaf("integer", "Bytes of files written.")},
	}},
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
// after a line saying which bytes of how large a file these are, and the
// same as structuredContent (readOutput).
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
	end := c.Offset + int64(len(c.Data))
	head := fmt.Sprintf("bytes %d to %d of %d of '%s'", c.Offset, end, c.Size, a.Path)
	out := readResult{Path: a.Path, URI: fileURI(ws.Name, a.Path), Offset: c.Offset, Length: len(c.Data), Size: c.Size,
		EOF: end >= c.Size}
	e := encode(c.Data, textPlain, c.ContentType)
	out.Encoding, out.MIMEType, out.Content = e.encoding, e.mimeType, e.content
	res := mcpgo.NewToolResultResource(head, e.item(out.URI))
	res.StructuredContent = out
	return res, nil
}

// readResult is what read_file answers as structuredContent: the text's
// line and the resource's fields.
type readResult struct {
	Path     string `json:"path"`
	URI      string `json:"uri"`
	Offset   int64  `json:"offset"`
	Length   int    `json:"length"`
	Size     int64  `json:"size"`
	EOF      bool   `json:"eof"`
	Encoding string `json:"encoding"`
	MIMEType string `json:"mime_type"`
	Content  string `json:"content"`
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
	return changed(struct {
		Artifact  artifactView `json:"artifact"`
		TargetDir string       `json:"target_dir"`
		Entries   int          `json:"entries"`
		Bytes     int64        `json:"bytes"`
	}{viewArtifact(art), res.TargetDir, res.Entries, res.Bytes},
		"artifact '%s' of workspace '%s' unpacked into '%s': %d entries, %d bytes",
		art.Name, ws.Name, res.TargetDir, res.Entries, res.Bytes)
}
