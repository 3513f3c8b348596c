package mcp_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/mcp"
)

// findLayout is the volume the finding tools look at.
const findLayout = `mkdir -p src/sub same near/sr near/src near/srd && printf 'package a\n// TODO one\n' > src/a.go && ` +
	`printf 'x\n// TODO two\n' > src/sub/b.go && printf 'TODO not go\n' > notes.txt && ln -s src link && ` +
	`printf 'inner\n' > same/same && printf 'b' > near/src.bak && chmod 750 near/src`

func TestSearchFiles(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	a := newFilesAgent(t, h, "sf", findLayout)
	search := func(t *testing.T, args map[string]any) cairn.FileSearch {
		t.Helper()
		var out cairn.FileSearch
		a.read(t, "search_files", args, &out)
		require.NotNil(t, out.Matches, "always an array")
		return out
	}

	t.Run("OKGlob", func(t *testing.T) {
		out := search(t, map[string]any{"glob": "*.go"})
		require.Equal(t, volRoot, out.Path, "the mount root by default")
		require.Equal(t, []cairn.FileMatch{{Path: volRoot + "/src/a.go"}, {Path: volRoot + "/src/sub/b.go"}}, out.Matches,
			"the symlink to src is not followed")
		require.Empty(t, out.Stopped)
		require.Positive(t, out.Scanned)
	})
	t.Run("OKContent", func(t *testing.T) {
		out := search(t, map[string]any{"glob": "*.go", "content": `TODO \w+`})
		require.Equal(t, []cairn.FileMatch{
			{Path: volRoot + "/src/a.go", Line: 2, Text: "// TODO one"},
			{Path: volRoot + "/src/sub/b.go", Line: 2, Text: "// TODO two"},
		}, out.Matches)
		out = search(t, map[string]any{"path": volRoot + "/src/sub", "content": "TODO"})
		require.Equal(t, []cairn.FileMatch{{Path: volRoot + "/src/sub/b.go", Line: 2, Text: "// TODO two"}}, out.Matches)
	})
	t.Run("OKLimit", func(t *testing.T) {
		out := search(t, map[string]any{"content": "TODO", "limit": 1})
		require.Len(t, out.Matches, 1)
		require.Equal(t, "results", out.Stopped)
	})
	t.Run("ErrNothingToSearchFor", func(t *testing.T) {
		msg := a.fails(t, "search_files", map[string]any{"path": volRoot}, "invalid_parameters")
		require.Equal(t, "invalid_parameters: search_files parameters are not valid: give 'glob', 'content' or both", msg)
	})
	t.Run("ErrLimit", func(t *testing.T) {
		msg := a.fails(t, "search_files", map[string]any{"glob": "*", "limit": 1001}, "invalid_parameters")
		require.Equal(t, "invalid_parameters: search_files parameters are not valid: 'limit' must be between 1 and 1000", msg)
	})
	t.Run("ErrBadExpression", func(t *testing.T) {
		a.fails(t, "search_files", map[string]any{"content": "("}, "invalid_parameters")
	})
	t.Run("ErrThroughSymlink", func(t *testing.T) {
		a.fails(t, "search_files", map[string]any{"path": volRoot + "/link/sub", "glob": "*"}, "path_is_symlink")
	})
}

func TestDirectoryTree(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	a := newFilesAgent(t, h, "dt", findLayout)
	tree := func(t *testing.T, args map[string]any) (cairn.FileTree, []string) {
		t.Helper()
		var out cairn.FileTree
		a.read(t, "directory_tree", args, &out)
		paths := []string{}
		for _, e := range out.Entries {
			paths = append(paths, e.Path+":"+e.Type)
		}
		return out, paths
	}

	t.Run("OK", func(t *testing.T) {
		out, paths := tree(t, map[string]any{"path": volRoot + "/src"})
		require.Equal(t, []string{volRoot + "/src/a.go:file", volRoot + "/src/sub:dir", volRoot + "/src/sub/b.go:file"}, paths)
		require.Equal(t, "a.go", out.Entries[0].Name)
		require.Equal(t, int64(len("package a\n// TODO one\n")), out.Entries[0].Size)
		require.NotEmpty(t, out.Entries[0].ETag)
		require.Empty(t, out.Stopped)
	})
	t.Run("OKDepth", func(t *testing.T) {
		out, paths := tree(t, map[string]any{"depth": 1})
		require.Equal(t, volRoot, out.Path, "the mount root by default")
		require.Equal(t, []string{volRoot + "/link:symlink", volRoot + "/near:dir", volRoot + "/notes.txt:file",
			volRoot + "/same:dir", volRoot + "/src:dir"}, paths)
	})
	t.Run("OKLimit", func(t *testing.T) {
		out, paths := tree(t, map[string]any{"limit": 2})
		require.Equal(t, []string{volRoot + "/link:symlink", volRoot + "/near:dir"}, paths)
		require.Equal(t, "results", out.Stopped)
	})
	t.Run("ErrBounds", func(t *testing.T) {
		msg := a.fails(t, "directory_tree", map[string]any{"depth": 0}, "invalid_parameters")
		require.Equal(t, "invalid_parameters: directory_tree parameters are not valid: 'depth' must be between 1 and 32", msg)
		msg = a.fails(t, "directory_tree", map[string]any{"limit": 10001}, "invalid_parameters")
		require.Equal(t, "invalid_parameters: directory_tree parameters are not valid: 'limit' must be between 1 and 10000", msg)
	})
	t.Run("ErrMissing", func(t *testing.T) {
		a.fails(t, "directory_tree", map[string]any{"path": volRoot + "/nope"}, "path_not_found")
	})
}

func TestGetFileInfo(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	a := newFilesAgent(t, h, "gi", findLayout)
	listed := func(t *testing.T, dir, name string) cairn.FileEntry {
		t.Helper()
		var l cairn.FileListing
		a.read(t, "list_files", map[string]any{"path": dir}, &l)
		for _, e := range l.Entries {
			if e.Name == name {
				return e
			}
		}
		require.Failf(t, "not listed", "%s has no %s", dir, name)
		return cairn.FileEntry{}
	}

	t.Run("OKFile", func(t *testing.T) {
		e := a.info(t, volRoot+"/src/a.go")
		require.Equal(t, cairn.FileTypeFile, e.Type)
		require.NotEmpty(t, e.ETag)
		require.Equal(t, listed(t, volRoot+"/src", "a.go"), e)
	})
	t.Run("OKDirectory", func(t *testing.T) {
		e := a.info(t, volRoot+"/near/src")
		require.Equal(t, cairn.FileTypeDir, e.Type)
		require.Equal(t, "0750", e.Mode, "its own entry, among neighbours named alike")
		require.Equal(t, listed(t, volRoot+"/near", "src"), e)
		require.Equal(t, e, a.info(t, volRoot+"/near/src/"), "a trailing slash names the same")
	})
	t.Run("OKDirectoryHoldingItsName", func(t *testing.T) {
		e := a.info(t, volRoot+"/same")
		require.Equal(t, listed(t, volRoot, "same"), e, "the directory, not the file of the same name inside it")
		require.Equal(t, cairn.FileTypeDir, e.Type)
	})
	t.Run("OKSymlink", func(t *testing.T) {
		e := a.info(t, volRoot+"/link")
		require.Equal(t, cairn.FileTypeSymlink, e.Type)
		require.Equal(t, "src", *e.LinkTarget)
	})
	t.Run("OKMountRoot", func(t *testing.T) {
		var out struct {
			Path  string
			Entry map[string]any
		}
		a.read(t, "get_file_info", map[string]any{"path": volRoot}, &out)
		require.Equal(t, volRoot, out.Path)
		require.Equal(t, "ws", out.Entry["name"])
		require.Equal(t, "dir", out.Entry["type"])
	})
	for _, tc := range []struct{ name, path, reason string }{
		{"ErrMissing", volRoot + "/nope", "path_not_found"},
		{"ErrMissingInFile", volRoot + "/notes.txt/x", "path_not_found"},
		{"ErrThroughSymlink", volRoot + "/link/a.go", "path_is_symlink"},
		{"ErrOutside", "/etc", "path_outside_mount"},
	} {
		t.Run(tc.name, func(t *testing.T) { a.fails(t, "get_file_info", map[string]any{"path": tc.path}, tc.reason) })
	}
}
