package mcp

import (
	"context"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// writerNote closes the description of every tool that changes files.
const writerNote = " Symlinks are never followed, neither as the last component nor on the way (path_is_symlink)." + volumeNote

const (
	fileModeDesc = "Permission bits in octal, at most 0777, e.g. 0644. Default: 0666 for a new file; a rewritten file keeps its mode."
	dirModeDesc  = "Permission bits in octal, at most 0777, e.g. 0750 (default 0777)."
	ifMatchDesc  = "Write only if the file's etag is still this one (from get_file_info, list_files or an earlier write); " +
		"a file changed since is refused with file_changed."
)

var writeFileTool = definition{
	name:  "write_file",
	scope: "write",
	description: "Write text as the whole content of a file of the workspace volume, creating it or replacing what it held: " +
		"written beside it and renamed into place, so a reader sees the old file or the new one, never a part. Its directory " +
		"must exist. For a small change to an existing file, edit_file is safer. Answers the file's new entry, with its etag." +
		writerNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path of the file, inside /mnt/cairn/ws, e.g. /mnt/cairn/ws/src/main.go."),
		requiredString("content", "The file's whole new content, as UTF-8 text; may be empty. Bounded by the request's 1 MiB "+
			"and the server's files.write.maxBytes (body_too_large); larger files go through an artifact."),
		optionalString("mode", fileModeDesc),
		optionalString("if_match", ifMatchDesc),
		optionalBoolean("create_only", "Only create the file: refuse one that exists (target_exists). Not with if_match."),
	},
	output:      &changeOutput,
	annotations: action(true, true),
}

var editFileTool = definition{
	name:  "edit_file",
	scope: "write",
	description: "Change a text file of the workspace volume by exact replacements, applied in order, each to the text the " +
		"previous ones left. Each old_text must occur exactly once, else nothing is written and the call names the edit " +
		"and how often its text occurs: include enough surrounding lines to make it unique. Answers a unified diff of the " +
		"change. The file is read whole (at most 1048576 bytes, UTF-8), and written only if it is still the version read: " +
		"a change made meanwhile is refused with file_changed rather than lost; read it again and retry. With dry_run, " +
		"nothing is written." + writerNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path of the file, inside /mnt/cairn/ws, e.g. /mnt/cairn/ws/src/main.go."),
		requiredObjects("edits", "The replacements, at least one, applied in this order.",
			requiredString("old_text", "Text to replace: exact, whitespace and line ends included; it must occur exactly once."),
			requiredString("new_text", "Text to put in its place; empty deletes old_text."),
		),
		optionalBoolean("dry_run", "Only answer the diff the edits would make; write nothing (default false)."),
	},
	output: &object{props: []property{
		{name: "path", required: true, schema: leaf("string", "The file edited.")},
		{name: "diff", required: true, schema: leaf("string", "Unified diff of the change; empty when the edits change nothing.")},
		{name: "dry_run", required: true, schema: leaf("boolean", "True when nothing was written.")},
		{name: "entry", schema: fileItem},
	}},
	annotations: action(true, false),
}

var createDirectoryTool = definition{
	name:  "create_directory",
	scope: "write",
	description: "Make a directory of the workspace volume. By default the missing directories on the way are made too, " +
		"and an existing directory counts as done." + writerNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path of the directory, inside /mnt/cairn/ws, e.g. /mnt/cairn/ws/out/logs."),
		optionalBoolean("parents", "Make missing parent directories, and take an existing directory for done (default true). "+
			"With false, the parent must exist and the path must not (target_exists)."),
		optionalString("mode", dirModeDesc),
	},
	output:      &changeOutput,
	annotations: action(false, true),
}

var moveFileTool = definition{
	name:  "move_file",
	scope: "write",
	description: "Rename or move a file, symlink or directory within the workspace volume, atomically. The destination " +
		"must not exist unless overwrite is set (a directory replaces only an empty directory); its directory must exist. " +
		"The mount root cannot be moved, nor a directory into itself." + writerNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("from", "Absolute path to move, inside /mnt/cairn/ws."),
		requiredString("to", "Absolute new path, inside /mnt/cairn/ws."),
		optionalBoolean("overwrite", "Replace what the destination holds (default false: target_exists)."),
	},
	output:      &changeOutput,
	annotations: action(true, false),
}

var deletePathTool = definition{
	name:  "delete_path",
	scope: "write",
	description: "Delete a file, a symlink (never what it points to) or an empty directory of the workspace volume; with " +
		"recursive, a directory and everything under it. There is no undo: keep what matters as an artifact first. " +
		"The mount root cannot be deleted." + writerNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path to delete, inside /mnt/cairn/ws."),
		optionalBoolean("recursive", "Delete a directory with everything under it (default false: directory_not_empty)."),
	},
	output:      &changeOutput,
	annotations: action(true, true),
}

// changeOutput is what a change answers: cairn.FileChange.
var changeOutput = object{props: []property{
	{name: "path", required: true, schema: leaf("string", "The path acted on.")},
	{name: "entry", schema: fileItem},
}}

// checkMode refuses a mode the service would, in the tool's words.
func checkMode(tool, mode string) error {
	if err := cairn.ValidateFileMode(mode); err != nil {
		return badParameters(tool, "%s", cairn.ErrorDetail(err))
	}
	return nil
}

type writeFileArgs struct {
	fileArgs
	Content    string `json:"content"`
	Mode       string `json:"mode"`
	IfMatch    string `json:"if_match"`
	CreateOnly bool   `json:"create_only"`
}

func (a writeFileArgs) check(tool string) error {
	if err := a.fileArgs.check(tool); err != nil {
		return err
	}
	if a.IfMatch != "" && a.CreateOnly {
		return badParameters(tool, "'if_match' and 'create_only' exclude each other")
	}
	return checkMode(tool, a.Mode)
}

func (t *toolbox) writeFile(ctx context.Context, a writeFileArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	c, err := t.svc.WriteFile(ctx, ws.ID, cairn.FileWriteParams{
		Path: a.Path, Data: []byte(a.Content), Mode: a.Mode, IfMatch: a.IfMatch, CreateOnly: a.CreateOnly,
	})
	if err != nil {
		return nil, err
	}
	return changed(c, "wrote %d bytes to '%s' of workspace '%s'; its etag is now %s", len(a.Content), c.Path, ws.Name, etag(c))
}

// etag is the ETag a change left, for the sentence of a write.
func etag(c *cairn.FileChange) string {
	if c.Entry == nil {
		return "unknown"
	}
	return c.Entry.ETag
}

// textEdit is one replacement of edit_file.
type textEdit struct {
	OldText string `json:"old_text"`
	NewText string `json:"new_text"`
}

type editFileArgs struct {
	fileArgs
	Edits  []textEdit `json:"edits"`
	DryRun bool       `json:"dry_run"`
}

func (a editFileArgs) check(tool string) error {
	if err := a.fileArgs.check(tool); err != nil {
		return err
	}
	if len(a.Edits) == 0 {
		return badParameters(tool, "'edits' must hold at least one edit")
	}
	for i, e := range a.Edits {
		if e.OldText == "" {
			return badParameters(tool, "edits item %d: 'old_text' must not be empty", i)
		}
	}
	return nil
}

// editResult is what edit_file answers.
type editResult struct {
	Path   string           `json:"path"`
	Diff   string           `json:"diff"`
	DryRun bool             `json:"dry_run"`
	Entry  *cairn.FileEntry `json:"entry,omitempty"`
}

// editFile reads the file whole, applies the edits and writes the result
// over the version it read (If-Match its ETag), so that a change made in
// between fails the call with file_changed instead of being overwritten.
func (t *toolbox) editFile(ctx context.Context, a editFileArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	before, err := t.readWhole(ctx, ws.ID, a.Path)
	if err != nil {
		return nil, err
	}
	text := string(before.Data)
	after, err := applyEdits(a.Path, text, a.Edits)
	if err != nil {
		return nil, err
	}
	out := editResult{Path: before.Path, Diff: udiff.Unified(before.Path, before.Path, text, after), DryRun: a.DryRun}
	if a.DryRun {
		return changed(out, "dry run, nothing written: the edits would change '%s' of workspace '%s' so:\n%s",
			out.Path, ws.Name, out.Diff)
	}
	c, err := t.svc.WriteFile(ctx, ws.ID, cairn.FileWriteParams{Path: before.Path, Data: []byte(after), IfMatch: before.ETag})
	if err != nil {
		return nil, err
	}
	out.Path, out.Entry = c.Path, c.Entry
	return changed(out, "edited '%s' of workspace '%s'; its etag is now %s:\n%s", out.Path, ws.Name, etag(c), out.Diff)
}

// readWhole reads a text file in one read. A larger file is refused rather
// than paged through: its pages would come from one version only by luck,
// and the request that carries the edits is bounded at 1 MiB anyway.
func (t *toolbox) readWhole(ctx context.Context, workspaceID, path string) (*cairn.FileContent, error) {
	c, err := t.svc.ReadFile(ctx, workspaceID, cairn.FileReadParams{Path: path, Length: cairn.MaxFileReadBytes})
	if err != nil {
		return nil, err
	}
	if c.Size > int64(len(c.Data)) {
		return nil, cairn.Errorf(cairn.ReasonRangeTooLarge, "'%s' is %d bytes; %s edits files of at most %d bytes, "+
			"which one read takes whole", path, c.Size, editFileTool.name, cairn.MaxFileReadBytes)
	}
	if !utf8.Valid(c.Data) {
		return nil, badParameters(editFileTool.name, "'%s' is not UTF-8 text", path)
	}
	return c, nil
}

// applyEdits applies each edit in turn to what the previous ones left.
func applyEdits(path, text string, edits []textEdit) (string, error) {
	for i, e := range edits {
		if n := occurrences(text, e.OldText); n != 1 {
			return "", badParameters(editFileTool.name, "edits item %d: 'old_text' occurs %d times in '%s', not exactly once; "+
				"nothing was written", i, n, path)
		}
		text = strings.Replace(text, e.OldText, e.NewText, 1)
	}
	return text, nil
}

// occurrences counts the places s starts in text, overlapping ones
// included: "aa" occurs twice in "aaa", and an edit of it would be a guess.
func occurrences(text, s string) int {
	n := 0
	for {
		i := strings.Index(text, s)
		if i < 0 {
			return n
		}
		n++
		text = text[i+1:]
	}
}

type createDirectoryArgs struct {
	fileArgs
	Parents *bool  `json:"parents"`
	Mode    string `json:"mode"`
}

func (a createDirectoryArgs) check(tool string) error {
	if err := a.fileArgs.check(tool); err != nil {
		return err
	}
	return checkMode(tool, a.Mode)
}

// createDirectory makes parents by default, as MCP filesystem servers do:
// an agent means "make sure it is there".
func (t *toolbox) createDirectory(ctx context.Context, a createDirectoryArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	parents := a.Parents == nil || *a.Parents
	c, err := t.svc.MakeDir(ctx, ws.ID, cairn.MakeDirParams{Path: a.Path, Parents: parents, Mode: a.Mode})
	if err != nil {
		return nil, err
	}
	return changed(c, "directory '%s' is in place in workspace '%s'", c.Path, ws.Name)
}

type moveFileArgs struct {
	WorkspaceName string `json:"workspace_name"`
	From          string `json:"from"`
	To            string `json:"to"`
	Overwrite     bool   `json:"overwrite"`
}

func (a moveFileArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	if err := checkPath(tool, "from", a.From); err != nil {
		return err
	}
	return checkPath(tool, "to", a.To)
}

func (t *toolbox) moveFile(ctx context.Context, a moveFileArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	c, err := t.svc.MovePath(ctx, ws.ID, cairn.MoveParams{From: a.From, To: a.To, Overwrite: a.Overwrite})
	if err != nil {
		return nil, err
	}
	return changed(c, "moved '%s' to '%s' in workspace '%s'", a.From, c.Path, ws.Name)
}

type deletePathArgs struct {
	fileArgs
	Recursive bool `json:"recursive"`
}

func (t *toolbox) deletePath(ctx context.Context, a deletePathArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	c, err := t.svc.RemovePath(ctx, ws.ID, cairn.FileRemoveParams{Path: a.Path, Recursive: a.Recursive})
	if err != nil {
		return nil, err
	}
	return changed(c, "deleted '%s' from workspace '%s'", c.Path, ws.Name)
}
