package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// volumeTree is a workspace volume with one of each kind of file, a name
// that would drive a terminal, and a 2.5 MiB file read in three reads.
const volumeTree = "cd " + cairn.MountPath + " && mkdir -p src/sub && printf 'package main\\n' > src/main.go && " +
	"printf 'deep' > src/sub/x && ln -s src/main.go latest && printf '\\000\\001bin' > bin && " +
	"touch \"$(printf 'evil\\033[31m')\" && yes 0123456789abcdef | head -c 2621440 > big && chmod 4755 bin"

// The fs commands and the archive commands through the built binary on the
// real stack: -o json is the REST payload, the tables are safe on a
// terminal, and the exit codes come from real refusals.
func TestCLIFiles(t *testing.T) {
	t.Parallel()
	s := startCLIServer(t)
	wsName := uniqueName("files")
	ws := field[cairn.Workspace](t, s.json(t, "ws", "create", wsName), "workspace")
	s.ok(t, "ws", "setup", wsName)
	stacktest.RunInVolume(t, s.app, ws.VolumeName, volumeTree)
	filesURL := "/v1/workspaces/" + ws.ID + "/files?path="

	t.Run("List", func(t *testing.T) {
		requireSameJSON(t, s.rest(t, "GET", filesURL+url.QueryEscape(cairn.MountPath)), s.json(t, "fs", "ls", wsName))
		requireSameJSON(t, s.rest(t, "GET", filesURL+url.QueryEscape(cairn.MountPath+"/src")), s.json(t, "fs", "ls", ws.ID, "src"))
		require.Equal(t, "big\nbin\nevil^[[31m\nlatest\nsrc/\n", s.ok(t, "fs", "ls", wsName, "-o", "table").stdout)
		long := s.ok(t, "fs", "ls", wsName, "--long", "-o", "table").stdout
		require.Regexp(t, `^MODE +SIZE +MODIFIED \(UTC\) +NAME\n`, long)
		require.Regexp(t, `\n-rw-r--r-- +2\.5 MiB +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +big\n`, long)
		require.Regexp(t, `\n-rwsr-xr-x +5 B .* bin\n`, long)
		require.Regexp(t, `\nlrwxrwxrwx .* latest -> src/main\.go\n`, long)
		require.Regexp(t, `\ndrwxr-xr-x .* src\n`, long)
		require.NotContains(t, long, "\x1b")
		require.Equal(t, "big\nbin\nevil\x1b[31m\nlatest\nsrc\n", s.ok(t, "fs", "ls", wsName, "-o", "name").stdout,
			"exact names into a pipe")
		require.Equal(t, "main.go\n", s.ok(t, "fs", "ls", wsName, "src/main.go", "-o", "table").stdout, "a file lists as itself")
	})

	t.Run("Stat", func(t *testing.T) {
		listing := field[[]cairn.FileEntry](t, s.rest(t, "GET", filesURL+url.QueryEscape(cairn.MountPath)), "entries")
		for _, e := range listing {
			if strings.Contains(e.Name, "\x1b") {
				continue // no path can name it
			}
			doc := s.json(t, "fs", "stat", wsName, e.Name)
			require.Equal(t, cairn.MountPath+"/"+e.Name, field[string](t, doc, "path"))
			requireSameJSON(t, e, field[cairn.FileEntry](t, doc, "entry"))
		}
		sub := field[cairn.FileEntry](t, s.json(t, "fs", "stat", wsName, cairn.MountPath+"/src/sub/x"), "entry")
		require.Equal(t, int64(4), sub.Size)
		root := field[cairn.FileEntry](t, s.json(t, "fs", "stat", wsName, cairn.MountPath), "entry")
		require.Equal(t, cairn.FileTypeDir, root.Type)
		table := s.ok(t, "fs", "stat", wsName, "latest", "-o", "table").stdout
		require.Regexp(t, `Mode: +0777 \(lrwxrwxrwx\)\n`, table)
		require.Contains(t, table, "Link target:  src/main.go\n")
	})

	t.Run("Cat", func(t *testing.T) {
		big := bytes.Repeat([]byte("0123456789abcdef\n"), 2621440/17+1)[:2621440]
		require.Equal(t, "package main\n", s.ok(t, "fs", "cat", wsName, "src/main.go").stdout)
		r := s.ok(t, "fs", "cat", wsName, cairn.MountPath+"/big")
		require.Equal(t, string(big), r.stdout, "three reads, in order")
		require.Less(t, r.maxRSS, int64(64<<20))
		require.Equal(t, string(big[1<<20-3:1<<20+7]),
			s.ok(t, "fs", "cat", wsName, "big", "--offset", fmt.Sprint(1<<20-3), "--length", "10").stdout)
		require.Equal(t, "\x00\x01bin", s.ok(t, "fs", "cat", wsName, "bin").stdout, "bytes as they are into a pipe")
	})

	t.Run("ExitCodes", func(t *testing.T) {
		r := s.fails(t, 3, "fs", "ls", wsName, "absent")
		require.Contains(t, r.stderr, "path_not_found")
		require.Contains(t, r.stderr, "HTTP 404")
		r = s.fails(t, 3, "fs", "stat", wsName, "src/absent")
		require.Contains(t, r.stderr, "path_not_found")
		s.fails(t, 3, "fs", "stat", wsName, "big/big") // under a file of the same name
		s.fails(t, 3, "fs", "cat", wsName, "absent")
		r = s.fails(t, 1, "fs", "cat", wsName, "src")
		require.Contains(t, r.stderr, "path_is_directory")
		r = s.fails(t, 1, "fs", "cat", wsName, "latest")
		require.Contains(t, r.stderr, "path_is_symlink")
		r = s.fails(t, 1, "fs", "ls", wsName, "/etc")
		require.Contains(t, r.stderr, "path_outside_mount")
		s.fails(t, 3, "fs", "ls", uniqueName("missing"))
		bare := uniqueName("bare")
		s.ok(t, "ws", "create", bare)
		r = s.fails(t, 4, "fs", "ls", bare)
		require.Contains(t, r.stderr, "volume_not_ready")
		s.fails(t, 2, "fs", "cat", wsName, "big", "--offset", "-3")
		s.fails(t, 2, "fs", "stat", wsName)
		reader := s.cliEnv(t, map[string]string{"CAIRN_URL": s.url, "CAIRN_TOKEN": cliReadToken}, "fs", "ls", wsName)
		require.Equal(t, 0, reader.code, "reading files takes the read scope: %s", reader.stderr)
	})

	t.Run("Archives", func(t *testing.T) {
		for _, format := range []string{cairn.ArchiveTarGz, cairn.ArchiveZip} {
			saved := field[cairn.Artifact](t, s.json(t, "art", "save", wsName, cairn.MountPath+"/src", "--format", format), "artifact")
			require.Equal(t, archiveName("src", format), saved.Name)
			require.Equal(t, map[string]string{"tar.gz": cairn.MIMEGzip, "zip": cairn.MIMEZip}[format], saved.MIMEType)

			target := cairn.MountPath + "/copy-" + strings.ReplaceAll(format, ".", "-")
			var res cairn.UnpackResult
			out := s.ok(t, "art", "unpack", wsName+"/"+saved.Name, target, "-o", "json").stdout
			require.NoError(t, json.Unmarshal([]byte(out), &res))
			require.Equal(t, target, res.TargetDir)
			require.Positive(t, res.Entries)
			require.Equal(t, int64(len("package main\n")+len("deep")), res.Bytes)
			require.Equal(t, "main.go\nsub/\n", s.ok(t, "fs", "ls", wsName, target, "-o", "table").stdout)
			require.Equal(t, "deep", s.ok(t, "fs", "cat", wsName, target+"/sub/x").stdout)

			r := s.fails(t, 4, "art", "unpack", saved.ID, target)
			require.Contains(t, r.stderr, "target_exists")
		}
		table := s.ok(t, "art", "unpack", wsName+"/src_zip", cairn.MountPath+"/again", "-o", "table").stdout
		require.Regexp(t, `^Target: +/mnt/cairn/ws/again\nEntries: +\d+\nBytes: +17 B \(17 bytes\)\n$`, table)

		plain := field[cairn.Artifact](t, s.json(t, "art", "save", wsName, cairn.MountPath+"/src/main.go"), "artifact")
		require.Equal(t, "main_go", plain.Name, "no --format: one file, as before")
		r := s.fails(t, 1, "art", "unpack", plain.ID, cairn.MountPath+"/nope")
		require.Contains(t, r.stderr, "archive_invalid")
		s.fails(t, 2, "art", "save", wsName, cairn.MountPath+"/src", "--format", "rar")
		r = s.fails(t, 1, "art", "save", wsName, cairn.MountPath+"/src/main.go", "--format", "zip")
		require.Contains(t, r.stderr, "source_not_directory")
	})

	// The server removes its browse container before the volume; left to
	// the app's cleanup, that removal races the container's auto-removal.
	s.ok(t, "ws", "teardown", wsName)
}
