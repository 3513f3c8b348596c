package mcp

import (
	"cmp"
	"context"
	"slices"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/cairn-dev/cairn"
)

// underDesc describes the optional path of the tools that walk a tree.
const underDesc = "Absolute path of the directory to look under, /mnt/cairn/ws itself or inside it (default /mnt/cairn/ws)."

// stoppedDesc and scannedDesc describe the bounds of a walk.
const (
	stoppedDesc = "Present when a bound ended the walk before it saw everything: results (limit), entries (100000 " +
		"looked at), bytes (256 MiB of content read) or time (10 s). Narrow path, glob or depth and ask again."
	scannedDesc = "Directory entries looked at."
)

var searchFilesTool = definition{
	name:  "search_files",
	scope: "read",
	description: "Search the workspace volume under a directory, depth first in byte order of names: files whose name " +
		"matches glob and, with content, every line matching that regular expression (RE2 syntax) in the regular text files " +
		"among them (a file with a NUL byte in its first 8 KiB is skipped as binary). Give glob, content or both. " +
		"Symlinks are reported, never followed." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		optionalString("path", underDesc),
		optionalString("glob", "Match base names against this pattern: * and ? and [...] as in a shell, e.g. *.go "+
			"(default: every name). At most 1024 bytes."),
		optionalString("content", "Match lines against this RE2 regular expression, e.g. func \\w+Test. At most 1024 bytes."),
		optionalInteger("limit", "Return at most this many matches, 1 to 1000 (default 100)."),
	},
	output: &object{props: []property{
		{name: "path", required: true, schema: leaf("string", "The directory searched.")},
		{name: "matches", required: true, schema: arrayOf(matchItem, "The matches in walk order; empty when none.")},
		{name: "stopped", schema: leaf("string", stoppedDesc)},
		{name: "scanned", required: true, schema: leaf("integer", scannedDesc)},
	}},
	annotations: readOnly(),
}

var directoryTreeTool = definition{
	name:  "directory_tree",
	scope: "read",
	description: "List a directory of the workspace volume recursively, depth first in byte order of names: each entry " +
		"with its whole path, type, size, mode and modification time. Symlinks are reported, never descended into." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		optionalString("path", underDesc),
		optionalInteger("depth", "Levels to descend, 1 to 32 (default 3); 1 lists the directory's own entries only."),
		optionalInteger("limit", "Return at most this many entries, 1 to 10000 (default 1000)."),
	},
	output: &object{props: []property{
		{name: "path", required: true, schema: leaf("string", "The directory listed.")},
		{name: "entries", required: true, schema: arrayOf(treeItem, "The entries in walk order; empty for an empty directory.")},
		{name: "stopped", schema: leaf("string", stoppedDesc)},
		{name: "scanned", required: true, schema: leaf("integer", scannedDesc)},
	}},
	annotations: readOnly(),
}

var getFileInfoTool = definition{
	name:  "get_file_info",
	scope: "read",
	description: "Describe one path of the workspace volume: type (file, dir, symlink or other), size, mode, modification " +
		"time, a symlink's target, and a regular file's etag, which write_file takes as if_match. The mount root itself " +
		"reports its type only." + volumeNote,
	params: []param{
		requiredString("workspace_name", workspaceNameDesc),
		requiredString("path", "Absolute path, /mnt/cairn/ws itself or inside it, e.g. /mnt/cairn/ws/out/log.txt."),
	},
	output: &object{props: []property{
		{name: "path", required: true, schema: leaf("string", "The path described.")},
		{name: "entry", required: true, schema: fileItem},
	}},
	annotations: readOnly(),
}

var (
	matchItem = object{props: []property{
		{name: "path", required: true, schema: leaf("string", "The file.")},
		{name: "line", schema: leaf("integer", "The matching line's number, from 1; absent for a match of the name alone.")},
		{name: "text", schema: leaf("string", "The matching line, cut at 512 bytes.")},
	}}
	treeItem = object{props: slices.Concat([]property{
		{name: "path", required: true, schema: leaf("string", "The entry's whole path.")},
	}, fileItem.props)}
)

type searchFilesArgs struct {
	WorkspaceName string `json:"workspace_name"`
	Path          string `json:"path"`
	Glob          string `json:"glob"`
	Content       string `json:"content"`
	Limit         *int   `json:"limit"`
}

func (a searchFilesArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	if a.Glob == "" && a.Content == "" {
		return badParameters(tool, "give 'glob', 'content' or both")
	}
	return checkLimit(tool, a.Limit, cairn.MaxSearchLimit)
}

func (t *toolbox) searchFiles(ctx context.Context, a searchFilesArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	found, err := t.svc.SearchFiles(ctx, ws.ID, cairn.FileSearchParams{
		Path: cmp.Or(a.Path, cairn.MountPath), Glob: a.Glob, Content: a.Content, Limit: deref0(a.Limit),
	})
	if err != nil {
		return nil, err
	}
	return structured(found)
}

type directoryTreeArgs struct {
	WorkspaceName string `json:"workspace_name"`
	Path          string `json:"path"`
	Depth         *int   `json:"depth"`
	Limit         *int   `json:"limit"`
}

func (a directoryTreeArgs) check(tool string) error {
	if err := checkNames("workspace", a.WorkspaceName); err != nil {
		return err
	}
	if a.Depth != nil && (*a.Depth < 1 || *a.Depth > cairn.MaxTreeDepth) {
		return badParameters(tool, "'depth' must be between 1 and %d", cairn.MaxTreeDepth)
	}
	return checkLimit(tool, a.Limit, cairn.MaxTreeLimit)
}

func (t *toolbox) directoryTree(ctx context.Context, a directoryTreeArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	tree, err := t.svc.FileTree(ctx, ws.ID, cairn.FileTreeParams{
		Path: cmp.Or(a.Path, cairn.MountPath), Depth: deref0(a.Depth), Limit: deref0(a.Limit),
	})
	if err != nil {
		return nil, err
	}
	return structured(tree)
}

func (t *toolbox) getFileInfo(ctx context.Context, a fileArgs) (*mcpgo.CallToolResult, error) {
	ws, err := t.workspace(ctx, a.WorkspaceName)
	if err != nil {
		return nil, err
	}
	st, err := t.svc.StatFile(ctx, ws.ID, a.Path)
	if err != nil {
		return nil, err
	}
	return structured(struct {
		Path  string           `json:"path"`
		Entry *cairn.FileEntry `json:"entry"`
	}{st.Path, &st.FileEntry})
}
