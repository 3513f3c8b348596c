package mcp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/server/mcp"
	"github.com/cairn-dev/cairn/server/service"
)

const volRoot = cairn.MountPath // the volume's paths start here, as an agent names them

// TestWriteFile writes whole files, conditionally and not, on a server
// whose files.write.maxBytes is 64.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, service.Config{MaxFileWrite: 64})
	h.serveMCP(t, h.svc, mcp.Config{})
	a := newFilesAgent(t, h, "wf", "mkdir d")
	write := func(path, content string, more ...any) map[string]any {
		args := map[string]any{"path": path, "content": content}
		for i := 0; i+1 < len(more); i += 2 {
			args[more[i].(string)] = more[i+1]
		}
		return args
	}

	var first cairn.FileChange
	t.Run("OKNewFile", func(t *testing.T) {
		text := a.change(t, "write_file", write(volRoot+"/d/a.txt", "hello\n"), &first)
		require.Equal(t, volRoot+"/d/a.txt", first.Path)
		require.Equal(t, cairn.FileTypeFile, first.Entry.Type)
		require.Equal(t, int64(6), first.Entry.Size)
		require.NotEmpty(t, first.Entry.ETag)
		require.Equal(t, "wrote 6 bytes to '"+volRoot+"/d/a.txt' of workspace 'wf'; its etag is now "+first.Entry.ETag, text)
		require.Equal(t, "hello", a.sh(t, "cat d/a.txt"))
	})
	t.Run("OKIfMatch", func(t *testing.T) {
		var c cairn.FileChange
		a.change(t, "write_file", write(volRoot+"/d/a.txt", "second\n", "if_match", first.Entry.ETag), &c)
		require.NotEqual(t, first.Entry.ETag, c.Entry.ETag)
		require.Equal(t, "second", a.sh(t, "cat d/a.txt"))
	})
	t.Run("ErrStaleIfMatch", func(t *testing.T) {
		a.fails(t, "write_file", write(volRoot+"/d/a.txt", "lost\n", "if_match", first.Entry.ETag), "file_changed")
		require.Equal(t, "second", a.sh(t, "cat d/a.txt"), "a write over a version no longer there is refused")
	})
	t.Run("OKCreateOnly", func(t *testing.T) {
		var c cairn.FileChange
		a.change(t, "write_file", write(volRoot+"/d/new.txt", "", "create_only", true), &c)
		require.Equal(t, int64(0), c.Entry.Size)
		a.fails(t, "write_file", write(volRoot+"/d/new.txt", "x", "create_only", true), "target_exists")
	})
	t.Run("OKMode", func(t *testing.T) {
		var c cairn.FileChange
		a.change(t, "write_file", write(volRoot+"/run.sh", "#!/bin/sh\n", "mode", "0755"), &c)
		require.Equal(t, "0755", c.Entry.Mode)
	})
	t.Run("ErrBodyTooLarge", func(t *testing.T) {
		msg := a.fails(t, "write_file", write(volRoot+"/big", strings.Repeat("x", 65)), "body_too_large")
		require.Equal(t, "body_too_large: a file write carries at most 64 bytes; save a larger file as an artifact and load it", msg)
		require.Equal(t, "absent", a.sh(t, "test -e big && echo present || echo absent"))
	})
	for _, tc := range []struct {
		name   string
		args   map[string]any
		reason string
	}{
		{"ErrSetUID", write(volRoot+"/s", "x", "mode", "4755"), "invalid_parameters"},
		{"ErrBothConditions", write(volRoot+"/d/a.txt", "x", "if_match", "e", "create_only", true), "invalid_parameters"},
		{"ErrMountRoot", write(volRoot, "x"), "path_is_mount_root"},
		{"ErrDirectory", write(volRoot+"/d", "x"), "path_is_directory"},
		{"ErrMissingParent", write(volRoot+"/nodir/f", "x"), "path_not_found"},
		{"ErrOutside", write("/etc/passwd", "x"), "path_outside_mount"},
	} {
		t.Run(tc.name, func(t *testing.T) { a.fails(t, "write_file", tc.args, tc.reason) })
	}
}

// racingReads writes over one file right after the service read it: what
// another agent would do between edit_file's read and its write.
type racingReads struct {
	*service.Service
	path string
}

func (s racingReads) ReadFile(ctx context.Context, workspaceID string, p cairn.FileReadParams) (*cairn.FileContent, error) {
	c, err := s.Service.ReadFile(ctx, workspaceID, p)
	if err != nil || p.Path != s.path {
		return c, err
	}
	if _, err := s.WriteFile(ctx, workspaceID, cairn.FileWriteParams{Path: p.Path, Data: []byte("theirs\n")}); err != nil {
		return nil, err
	}
	return c, nil
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.serveMCP(t, racingReads{Service: h.svc, path: volRoot + "/race.txt"}, mcp.Config{})
	a := newFilesAgent(t, h, "ef", `printf 'one\ntwo\nthree\n' > e.txt && printf 'x\nx\naaa\n' > dup.txt && `+
		`printf 'ours\n' > race.txt && printf '\377\376' > bin && head -c 1048577 /dev/zero > huge && mkdir d`)
	edit := func(path string, dryRun bool, pairs ...string) map[string]any {
		edits := []map[string]any{}
		for i := 0; i+1 < len(pairs); i += 2 {
			edits = append(edits, map[string]any{"old_text": pairs[i], "new_text": pairs[i+1]})
		}
		return map[string]any{"path": path, "edits": edits, "dry_run": dryRun}
	}
	type result struct {
		Path   string
		Diff   string
		DryRun bool `json:"dry_run"`
		Entry  *cairn.FileEntry
	}

	t.Run("OKDryRun", func(t *testing.T) {
		before := a.info(t, volRoot+"/e.txt")
		var out result
		text := a.change(t, "edit_file", edit(volRoot+"/e.txt", true, "two\n", "2\n"), &out)
		require.True(t, out.DryRun)
		require.Nil(t, out.Entry)
		require.Contains(t, out.Diff, "--- "+volRoot+"/e.txt\n+++ "+volRoot+"/e.txt\n")
		require.Contains(t, out.Diff, "\n-two\n+2\n")
		require.Equal(t, "dry run, nothing written: the edits would change '"+volRoot+"/e.txt' of workspace 'ef' so:\n"+out.Diff, text)
		require.Equal(t, "one\ntwo\nthree", a.sh(t, "cat e.txt"))
		require.Equal(t, before.ETag, a.info(t, volRoot+"/e.txt").ETag, "a dry run writes nothing")
	})
	t.Run("OKEditsInOrder", func(t *testing.T) {
		var out result
		text := a.change(t, "edit_file", edit(volRoot+"/e.txt", false, "two\n", "2\n", "2\nthree", "2\n3"), &out)
		require.False(t, out.DryRun)
		require.Equal(t, volRoot+"/e.txt", out.Path)
		for _, line := range []string{" one\n", "-two\n", "-three\n", "+2\n", "+3\n"} {
			require.Contains(t, out.Diff, "\n"+line)
		}
		require.Equal(t, "one\n2\n3", a.sh(t, "cat e.txt"))
		require.Equal(t, a.info(t, volRoot+"/e.txt").ETag, out.Entry.ETag, "the entry is the file as written")
		require.Equal(t, "edited '"+volRoot+"/e.txt' of workspace 'ef'; its etag is now "+out.Entry.ETag+":\n"+out.Diff, text)
	})
	for _, tc := range []struct {
		name, path string
		pairs      []string
		reason     string
		text       string
	}{
		{"ErrOldTextMissing", "/e.txt", []string{"four", "4"}, "invalid_parameters",
			"edit_file parameters are not valid: edits item 0: 'old_text' occurs 0 times in '" + volRoot + "/e.txt', not exactly once; nothing was written"},
		{"ErrOldTextTwice", "/dup.txt", []string{"aaa", "b", "x\n", "y\n"}, "invalid_parameters",
			"edit_file parameters are not valid: edits item 1: 'old_text' occurs 2 times in '" + volRoot + "/dup.txt', not exactly once; nothing was written"},
		{"ErrOldTextOverlaps", "/dup.txt", []string{"aa", "b"}, "invalid_parameters",
			"edit_file parameters are not valid: edits item 0: 'old_text' occurs 2 times in '" + volRoot + "/dup.txt', not exactly once; nothing was written"},
		{"ErrOldTextEmpty", "/e.txt", []string{"", "x"}, "invalid_parameters",
			"edit_file parameters are not valid: edits item 0: 'old_text' must not be empty"},
		{"ErrNoEdits", "/e.txt", nil, "invalid_parameters", "edit_file parameters are not valid: 'edits' must hold at least one edit"},
		{"ErrNotText", "/bin", []string{"x", "y"}, "invalid_parameters", "edit_file parameters are not valid: '" + volRoot + "/bin' is not UTF-8 text"},
		{"ErrTooLarge", "/huge", []string{"x", "y"}, "range_too_large",
			"'" + volRoot + "/huge' is 1048577 bytes; edit_file edits files of at most 1048576 bytes, which one read takes whole"},
		{"ErrDirectory", "/d", []string{"x", "y"}, "path_is_directory", ""},
		{"ErrMissing", "/nope", []string{"x", "y"}, "path_not_found", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := a.fails(t, "edit_file", edit(volRoot+tc.path, false, tc.pairs...), tc.reason)
			if tc.text != "" {
				require.Equal(t, tc.reason+": "+tc.text, msg)
			}
		})
	}
	t.Run("ErrNothingWrittenOnRefusal", func(t *testing.T) {
		require.Equal(t, "x\nx\naaa", a.sh(t, "cat dup.txt"), "an edit before the refused one is not written either")
	})
	t.Run("ErrChangedSinceRead", func(t *testing.T) {
		a.fails(t, "edit_file", edit(volRoot+"/race.txt", false, "ours", "mine"), "file_changed")
		require.Equal(t, "theirs", a.sh(t, "cat race.txt"), "the change made after the read is kept, not overwritten")
	})
}

func TestFileChanges(t *testing.T) {
	t.Parallel()
	h := setup(t, mcp.Config{})
	a := newFilesAgent(t, h, "fc", "mkdir -p full/sub && printf x > full/sub/f && ln -s /etc full/etc && "+
		"printf a > a && printf b > b")

	t.Run("OKCreateDirectoryWithParents", func(t *testing.T) {
		var c cairn.FileChange
		text := a.change(t, "create_directory", map[string]any{"path": volRoot + "/p/q/r", "mode": "0750"}, &c)
		require.Equal(t, volRoot+"/p/q/r", c.Path)
		require.Equal(t, cairn.FileTypeDir, c.Entry.Type)
		require.Equal(t, "0750", c.Entry.Mode)
		require.Equal(t, "directory '"+volRoot+"/p/q/r' is in place in workspace 'fc'", text)
		var again cairn.FileChange
		a.change(t, "create_directory", map[string]any{"path": volRoot + "/p/q/r"}, &again)
		require.Equal(t, "0750", again.Entry.Mode, "an existing directory is done, untouched")
	})
	t.Run("ErrCreateDirectoryWithoutParents", func(t *testing.T) {
		a.fails(t, "create_directory", map[string]any{"path": volRoot + "/p", "parents": false}, "target_exists")
		a.fails(t, "create_directory", map[string]any{"path": volRoot + "/x/y", "parents": false}, "path_not_found")
		a.fails(t, "create_directory", map[string]any{"path": volRoot + "/full/etc/x"}, "path_is_symlink")
	})
	t.Run("OKMove", func(t *testing.T) {
		var c cairn.FileChange
		a.fails(t, "move_file", map[string]any{"from": volRoot + "/a", "to": volRoot + "/b"}, "target_exists")
		text := a.change(t, "move_file", map[string]any{"from": volRoot + "/a", "to": volRoot + "/b", "overwrite": true}, &c)
		require.Equal(t, volRoot+"/b", c.Path)
		require.Equal(t, "moved '"+volRoot+"/a' to '"+volRoot+"/b' in workspace 'fc'", text)
		require.Equal(t, "a", a.sh(t, "cat b; test -e a && echo ' a left'; true"))
	})
	t.Run("ErrMove", func(t *testing.T) {
		a.fails(t, "move_file", map[string]any{"from": volRoot, "to": volRoot + "/x"}, "path_is_mount_root")
		a.fails(t, "move_file", map[string]any{"from": volRoot + "/p", "to": volRoot + "/p/q/in"}, "invalid_parameters")
		a.fails(t, "move_file", map[string]any{"from": volRoot + "/nope", "to": volRoot + "/x"}, "path_not_found")
	})
	t.Run("OKDelete", func(t *testing.T) {
		var c cairn.FileChange
		a.fails(t, "delete_path", map[string]any{"path": volRoot + "/full"}, "directory_not_empty")
		text := a.change(t, "delete_path", map[string]any{"path": volRoot + "/full", "recursive": true}, &c)
		require.Equal(t, cairn.FileChange{Path: volRoot + "/full"}, c, "nothing is there now")
		require.Equal(t, "deleted '"+volRoot+"/full' from workspace 'fc'", text)
		a.fails(t, "delete_path", map[string]any{"path": volRoot + "/full", "recursive": true}, "path_not_found")
		require.Equal(t, "b p", a.sh(t, "ls | tr '\\n' ' ' | sed 's/ $//'"), "only what was asked is gone")
	})
	t.Run("ErrDeleteMountRoot", func(t *testing.T) {
		for _, root := range []string{volRoot, volRoot + "/", volRoot + "/."} {
			a.fails(t, "delete_path", map[string]any{"path": root, "recursive": true}, "path_is_mount_root")
		}
		require.Equal(t, "b p", a.sh(t, "ls | tr '\\n' ' ' | sed 's/ $//'"))
	})
}
