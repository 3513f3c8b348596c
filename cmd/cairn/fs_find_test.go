package main

import (
	"bytes"
	"path"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

func tableOf(v view) string {
	var b bytes.Buffer
	v.table(&b, 80)
	return b.String()
}

// grep's lines are 'path:line:text' with the path relative to the mount
// and every control character of either made visible; -o name gives each
// file once, exact.
func TestSearchView(t *testing.T) {
	t.Parallel()
	s := &cairn.FileSearch{Path: cairn.MountPath, Matches: []cairn.FileMatch{
		{Path: cairn.MountPath + "/src/main.go", Line: 1, Text: "package main"},
		{Path: cairn.MountPath + "/src/main.go", Line: 7, Text: "\x1b]0;owned\a\tx\r"},
		{Path: cairn.MountPath + "/evil\x1b[31m", Line: 2, Text: "red"},
	}}
	v := searchView(s, func(p string) string { return p })
	require.Equal(t, "src/main.go:1:package main\nsrc/main.go:7:^[]0;owned^G    x^M\nevil^[[31m:2:red\n", tableOf(v))
	require.Equal(t, []string{"src/main.go", "evil\x1b[31m"}, v.names)

	names := searchView(&cairn.FileSearch{Matches: []cairn.FileMatch{{Path: cairn.MountPath + "/a/b.go"},
		{Path: "/elsewhere"}}}, func(p string) string { return p })
	require.Equal(t, "a/b.go\n/elsewhere\n", tableOf(names), "a search of names alone: a path a line")
}

// tree indents each entry two spaces a level below the tree's path.
func TestTreeView(t *testing.T) {
	t.Parallel()
	target := "../x\x1b[0m"
	entry := func(p, typ string) cairn.FileTreeEntry {
		return cairn.FileTreeEntry{Path: p, FileEntry: cairn.FileEntry{Name: path.Base(p), Type: typ}}
	}
	link := entry(cairn.MountPath+"/src/sub/l", cairn.FileTypeSymlink)
	link.LinkTarget = &target
	tr := &cairn.FileTree{Path: cairn.MountPath + "/src", Entries: []cairn.FileTreeEntry{
		entry(cairn.MountPath+"/src/main.go", cairn.FileTypeFile),
		entry(cairn.MountPath+"/src/sub", cairn.FileTypeDir),
		entry(cairn.MountPath+"/src/sub/deep", cairn.FileTypeDir),
		entry(cairn.MountPath+"/src/sub/deep/\x07bell", cairn.FileTypeFile),
		link,
	}}
	v := treeView(tr, func(p string) string { return p })
	require.Equal(t, "main.go\nsub/\n  deep/\n    ^Gbell\n  l -> ../x^[[0m\n", tableOf(v))
	require.Equal(t, []string{"src/main.go", "src/sub", "src/sub/deep", "src/sub/deep/\abell", "src/sub/l"}, v.names)

	file := &cairn.FileTree{Path: cairn.MountPath + "/f", Entries: []cairn.FileTreeEntry{entry(cairn.MountPath+"/f", cairn.FileTypeFile)}}
	require.Equal(t, "f\n", tableOf(treeView(file, func(p string) string { return p })), "the tree of a file")
}

func TestShownPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]string{
		cairn.MountPath:             ".",
		cairn.MountPath + "/a/b":    "a/b",
		cairn.MountPath + "x/y":     cairn.MountPath + "x/y",
		"/etc/passwd":               "/etc/passwd",
		cairn.MountPath + "/-rf":    "-rf",
		cairn.MountPath + "/a/../b": "a/../b",
	} {
		require.Equal(t, want, shownPath(p), p)
	}
}

// The note after a walk names the bound that stopped it.
func TestWalkEndNote(t *testing.T) {
	t.Parallel()
	for end, want := range map[walkEnd]string{
		{"results", "matches", 100, 100, 2048}: "stopped at --limit 100 (2 048 entries looked at); more matches remain",
		{"results", "entries", 40, 1000, 40}:   "stopped at the size bound of one answer (40 entries looked at); more entries remain: narrow PATH or --depth",
		{"entries", "paths", 3, 100, 100000}:   "stopped at the server's bound of entries looked at (100 000 entries looked at); narrow PATH",
		{"bytes", "matches", 0, 100, 1}:        "stopped at the server's bound of content read (1 entry looked at); narrow PATH",
		{"time", "matches", 5, 100, 9}:         "stopped at the server's time bound (9 entries looked at); narrow PATH",
		{"\x1bnew", "matches", 1, 100, 1}:      "stopped early, at '^[new' (1 entry looked at)",
	} {
		require.Equal(t, want, end.note())
	}
}
