package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// writeBound is the server's files.write.maxBytes in these tests: small, so
// that a file over it is cheap to make.
const writeBound = 64 << 10

// The fs commands that search and change a volume, through the built
// binary on the real stack: what put writes cat reads back, the refusals
// exit with their reasons' codes, grep exits as grep does, and no path or
// text reaches the terminal raw.
func TestCLIFileChanges(t *testing.T) {
	t.Parallel()
	s := startCLIServerWith(t, fmt.Sprintf("files: {write: {maxBytes: %d}}\n", writeBound))
	wsName := uniqueName("changes")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	s.ok(t, "ws", "setup", wsName)
	stacktest.RunInVolume(t, s.app, ws.VolumeName, volumeTree)
	dir := t.TempDir()

	// Before anything else changes the volume: the tree is volumeTree's.
	t.Run("Tree", func(t *testing.T) {
		require.Equal(t, "big\nbin\nevil^[[31m\nlatest -> src/main.go\nsrc/\n  main.go\n  sub/\n",
			s.ok(t, "fs", "tree", wsName, "--depth", "2", "-o", "table").stdout)
		require.Equal(t, "main.go\nsub/\n  x\n", s.ok(t, "fs", "tree", wsName, cairn.MountPath+"/src", "-o", "table").stdout)
		require.Equal(t, "src/main.go\nsrc/sub\nsrc/sub/x\n", s.ok(t, "fs", "tree", wsName, "src", "-o", "name").stdout)
		requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID+"/files/tree?path="+url.QueryEscape(cairn.MountPath)),
			s.json(t, "fs", "tree", wsName))

		r := s.ok(t, "fs", "tree", wsName, "--limit", "2", "-o", "table")
		require.Equal(t, "big\nbin\n", r.stdout)
		require.Regexp(t, `^stopped at --limit 2 \(\d+ entries looked at\); more entries remain\n$`, r.stderr)
		s.fails(t, 2, "fs", "tree", wsName, "--depth", "0")
		s.fails(t, 3, "fs", "tree", wsName, "absent")
	})

	t.Run("Grep", func(t *testing.T) {
		r := s.ok(t, "fs", "grep", wsName, "^package", "-o", "table")
		require.Equal(t, "src/main.go:1:package main\n", r.stdout)
		require.Empty(t, r.stderr)
		require.Equal(t, "src/main.go:1:package main\n",
			s.ok(t, "fs", "grep", wsName, "main", "src", "--glob", "*.go", "-o", "table").stdout)
		requireSameJSON(t, s.rest(t, "GET", "/v1/workspaces/"+ws.ID+"/files/search?content=deep"),
			s.json(t, "fs", "grep", wsName, "deep"))

		none := s.cli(t, "fs", "grep", wsName, "no such line", "-o", "table")
		require.Equal(t, 1, none.code, "nothing matched: 1, as grep")
		require.Empty(t, none.stdout)
		require.Empty(t, none.stderr)
		require.Equal(t, 1, s.cli(t, "fs", "grep", wsName, "package", "src", "--glob", "*.c").code)

		r = s.ok(t, "fs", "grep", wsName, "abc", "big", "--limit", "2", "-o", "table")
		require.Equal(t, "big:1:0123456789abcdef\nbig:2:0123456789abcdef\n", r.stdout)
		require.Equal(t, "stopped at --limit 2 (1 entry looked at); more matches remain\n", r.stderr)

		s.fails(t, 2, "fs", "grep", wsName, "")
		s.fails(t, 2, "fs", "grep", wsName, "x", "--limit", "1001")
		require.Contains(t, s.fails(t, 1, "fs", "grep", wsName, "(unclosed").stderr, "invalid_parameters")
		s.fails(t, 3, "fs", "grep", wsName, "x", "absent")
	})

	t.Run("Find", func(t *testing.T) {
		require.Equal(t, "src/main.go\n", s.ok(t, "fs", "find", wsName, "--name", "*.go", "-o", "table").stdout)
		require.Equal(t, "evil^[[31m\n", s.ok(t, "fs", "find", wsName, "--name", "evil*", "-o", "table").stdout)
		require.Equal(t, "evil\x1b[31m\n", s.ok(t, "fs", "find", wsName, "--name", "evil*", "-o", "name").stdout,
			"exact names into a pipe")
		require.Equal(t, "src/sub/x\n", s.ok(t, "fs", "find", wsName, "src/sub", "-o", "table").stdout, "what lies under PATH")
		require.Empty(t, s.ok(t, "fs", "find", wsName, "--name", "*.c", "-o", "table").stdout, "none found: 0, as find")
	})

	t.Run("Put", func(t *testing.T) {
		local := filepath.Join(dir, "config.yaml")
		require.NoError(t, os.WriteFile(local, []byte("a: 1\n"), 0o600))
		first := changeOf(t, s.json(t, "fs", "put", wsName, "config.yaml", local))
		require.Equal(t, cairn.MountPath+"/config.yaml", first.Path)
		require.Equal(t, int64(5), first.Entry.Size)
		require.Equal(t, "0666", first.Entry.Mode)
		require.NotEmpty(t, first.Entry.ETag)
		require.Equal(t, "a: 1\n", s.ok(t, "fs", "cat", wsName, "config.yaml").stdout)

		second := s.cliInput(t, strings.NewReader("b: 2\n"), "fs", "put", wsName, cairn.MountPath+"/config.yaml",
			"--if-match", first.Entry.ETag, "-o", "table")
		require.Equal(t, 0, second.code, second.stderr)
		require.Regexp(t, `^Path: +/mnt/cairn/ws/config\.yaml\nType: +file\nSize: +5 B \(5 bytes\)\nMode: +0666 .*\n`+
			`Modified: .*\nETag: +\S+\n$`, second.stdout)
		require.NotContains(t, second.stdout, first.Entry.ETag, "a new etag")
		require.Equal(t, "b: 2\n", s.ok(t, "fs", "cat", wsName, "config.yaml").stdout)

		stale := s.fails(t, 4, "fs", "put", wsName, "config.yaml", local, "--if-match", first.Entry.ETag)
		require.Contains(t, stale.stderr, "file_changed")
		exists := s.fails(t, 4, "fs", "put", wsName, "config.yaml", local, "--create-only")
		require.Contains(t, exists.stderr, "target_exists")
		require.Equal(t, "b: 2\n", s.ok(t, "fs", "cat", wsName, "config.yaml").stdout, "neither refusal wrote")

		binary := make([]byte, 256)
		for i := range binary {
			binary[i] = byte(i)
		}
		r := s.cliInput(t, bytes.NewReader(binary), "fs", "put", wsName, "blob", "-", "--create-only", "--mode", "0600", "-o", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "0600", changeOf(t, decode(t, r.stdout)).Entry.Mode)
		require.Equal(t, string(binary), s.ok(t, "fs", "cat", wsName, "blob").stdout, "every byte, as it was")

		empty := s.cliInput(t, strings.NewReader(""), "fs", "put", wsName, "empty", "-o", "json")
		require.Equal(t, 0, empty.code, empty.stderr)
		require.Zero(t, changeOf(t, decode(t, empty.stdout)).Entry.Size)

		s.fails(t, 3, "fs", "put", wsName, "absent/f", local)
		reader := s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": cliReadToken}, "fs", "put", wsName, "r", local)
		require.Equal(t, 5, reader.code, "writing takes the write scope: %s", reader.stderr)
	})

	t.Run("PutOverBound", func(t *testing.T) {
		at := bytes.Repeat([]byte("z"), writeBound)
		atFile := filepath.Join(dir, "at")
		require.NoError(t, os.WriteFile(atFile, at, 0o600))
		s.ok(t, "fs", "put", wsName, "at", atFile)
		require.Equal(t, string(at), s.ok(t, "fs", "cat", wsName, "at").stdout, "the bound itself is allowed")

		over := filepath.Join(dir, "over")
		require.NoError(t, os.WriteFile(over, append(at, 'z'), 0o600))
		for _, r := range []result{
			s.cli(t, "fs", "put", wsName, "over", over),
			s.cliInput(t, bytes.NewReader(append(at, 'z')), "fs", "put", wsName, "over"),
		} {
			require.Equal(t, 1, r.code, r.stderr)
			require.Contains(t, r.stderr, "at most 64.0 KiB (65 536 bytes, the server's files.write.maxBytes)")
			require.Contains(t, r.stderr, "body_too_large")
			require.Contains(t, r.stderr, "'cairn art upload WS FILE', then 'cairn art load ART PATH'")
			require.NotContains(t, r.stderr, "HTTP 413", "refused here, before a request")
		}
		s.fails(t, 3, "fs", "stat", wsName, "over")
	})

	t.Run("Dirs", func(t *testing.T) {
		made := changeOf(t, s.json(t, "fs", "mkdir", wsName, "a"))
		require.Equal(t, cairn.FileTypeDir, made.Entry.Type)
		require.Equal(t, "0777", made.Entry.Mode)
		require.Contains(t, s.fails(t, 4, "fs", "mkdir", wsName, "a").stderr, "target_exists")
		require.Contains(t, s.fails(t, 3, "fs", "mkdir", wsName, "x/y").stderr, "path_not_found")
		deep := changeOf(t, s.json(t, "fs", "mkdir", wsName, "a/b/c", "-p", "--mode", "0750"))
		require.Equal(t, "0750", deep.Entry.Mode)
		s.ok(t, "fs", "mkdir", wsName, "a/b/c", "-p")

		s.cliInput(t, strings.NewReader("f"), "fs", "put", wsName, "a/b/c/f")
		moved := changeOf(t, s.json(t, "fs", "mv", wsName, "a/b/c/f", cairn.MountPath+"/a/g"))
		require.Equal(t, cairn.MountPath+"/a/g", moved.Path)
		require.Equal(t, "b\ng\n", s.ok(t, "fs", "ls", wsName, "a", "-o", "name").stdout)
		require.Contains(t, s.fails(t, 4, "fs", "mv", wsName, "a/g", "config.yaml").stderr, "target_exists")
		s.ok(t, "fs", "mv", wsName, "a/g", "config.yaml", "-f")
		require.Equal(t, "f", s.ok(t, "fs", "cat", wsName, "config.yaml").stdout)
		require.Contains(t, s.fails(t, 1, "fs", "mv", wsName, "a", "a/b/a").stderr, "invalid_parameters")

		require.Contains(t, s.fails(t, 4, "fs", "rm", wsName, "a").stderr, "directory_not_empty")
		r := s.ok(t, "fs", "rm", wsName, "a", "-r", "-o", "table")
		require.Empty(t, r.stdout)
		require.Equal(t, "removed /mnt/cairn/ws/a\n", r.stderr)
		s.fails(t, 3, "fs", "stat", wsName, "a")
		s.ok(t, "fs", "rm", wsName, "latest")
		require.Equal(t, "package main\n", s.ok(t, "fs", "cat", wsName, "src/main.go").stdout, "a symlink goes, never its target")
		require.Contains(t, s.fails(t, 1, "fs", "rm", wsName, cairn.MountPath, "-r").stderr, "path_is_mount_root")
		s.fails(t, 3, "fs", "rm", wsName, "a")
	})

	t.Run("Hostile", func(t *testing.T) {
		hostile := "evil\x1b]0;owned\a\x1b[2J"
		for _, args := range [][]string{
			{"fs", "put", wsName, hostile, filepath.Join(dir, "config.yaml")},
			{"fs", "mkdir", wsName, hostile},
			{"fs", "mv", wsName, "config.yaml", hostile},
			{"fs", "rm", wsName, hostile},
			{"fs", "tree", wsName, hostile},
			{"fs", "grep", wsName, "x", hostile},
		} {
			r := s.fails(t, 1, args...)
			require.Contains(t, r.stderr, "invalid_path", args)
			require.NotContains(t, r.stdout+r.stderr, "\x1b", args)
			require.NotContains(t, r.stdout+r.stderr, "\a", args)
		}

		s.cliInput(t, strings.NewReader("ok\n\x1b[31mred\a line\n"), "fs", "put", wsName, "colours")
		r := s.ok(t, "fs", "grep", wsName, "red", "-o", "table")
		require.Equal(t, "colours:2:^[[31mred^G line\n", r.stdout)
	})

	// The server removes its browse container before the volume; left to
	// the app's cleanup, that removal races the container's auto-removal.
	s.ok(t, "ws", "teardown", wsName)
}

// changeOf decodes the change a put, mkdir or mv printed with -o json.
func changeOf(t *testing.T, doc map[string]json.RawMessage) cairn.FileChange {
	t.Helper()
	ch := cairn.FileChange{Path: field[string](t, doc, "path")}
	if _, ok := doc["entry"]; ok {
		ch.Entry = new(field[cairn.FileEntry](t, doc, "entry"))
	}
	return ch
}

// decode is the one JSON document of a run's stdout.
func decode(t *testing.T, stdout string) map[string]json.RawMessage {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(stdout), &doc), stdout)
	return doc
}
