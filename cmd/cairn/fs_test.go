package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn"
)

const testWS = fakeWorkspaceID

// A small tree: a directory, files, a symlink, and a name that would drive
// a terminal if written raw.
func fakeTree(t *testing.T) *fakeFiles {
	t.Helper()
	f := newFakeFiles(t)
	f.add(cairn.MountPath+"/src", cairn.FileTypeDir, "0755", nil)
	f.add(cairn.MountPath+"/src/main.go", cairn.FileTypeFile, "0644", []byte("package main\n"))
	f.add(cairn.MountPath+"/README.md", cairn.FileTypeFile, "0644", bytes.Repeat([]byte("x"), 14<<10))
	f.link(cairn.MountPath+"/latest", "src/main.go")
	f.add(cairn.MountPath+"/evil\x1b[31m\a", cairn.FileTypeFile, "4755", []byte("!"))
	f.add(cairn.MountPath+"/tmp", cairn.FileTypeDir, "1777", nil)
	return f
}

func TestFSList(t *testing.T) {
	t.Parallel()

	t.Run("PagesThroughAll", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		f.pageMax = 2
		var l cairn.FileListing
		require.NoError(t, json.Unmarshal([]byte(f.ok(t, "fs", "ls", testWS).stdout), &l), "JSON into a pipe, one object")
		require.Equal(t, cairn.MountPath, l.Path)
		require.Empty(t, l.NextAfter)
		var names []string
		for _, e := range l.Entries {
			names = append(names, e.Name)
		}
		require.Equal(t, []string{"README.md", "evil\x1b[31m\a", "latest", "src", "tmp"}, names, "byte order, every page")
		lists := f.listed()
		require.Len(t, lists, 3)
		require.Equal(t, cairn.FileListParams{Path: cairn.MountPath, Limit: cairn.MaxFileListLimit}, lists[0])
		require.Equal(t, "evil\x1b[31m\a", lists[1].After, "each page from the last one's next_after")
		require.Equal(t, "src", lists[2].After)
	})

	t.Run("Table", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		out := f.ok(t, "fs", "ls", testWS, "-o", "table").stdout
		require.Equal(t, "README.md\nevil^[[31m^G\nlatest\nsrc/\ntmp/\n", out, "a directory with '/', controls as escapes")
		require.NotContains(t, out, "\x1b")
	})

	t.Run("Long", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		out := f.ok(t, "fs", "ls", testWS, "--long", "-o", "table").stdout
		require.Equal(t, strings.Join([]string{
			"MODE        SIZE      MODIFIED (UTC)       NAME",
			"-rw-r--r--  14.0 KiB  2026-08-14 15:27:00  README.md",
			"-rwsr-xr-x  1 B       2026-08-14 15:27:00  evil^[[31m^G",
			"lrwxrwxrwx  11 B      2026-08-14 15:27:00  latest -> src/main.go",
			"drwxr-xr-x  4.0 KiB   2026-08-14 15:27:00  src",
			"drwxrwxrwt  4.0 KiB   2026-08-14 15:27:00  tmp",
		}, "\n")+"\n", out)
	})

	t.Run("NamesExactIntoAPipe", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		require.Equal(t, "README.md\nevil\x1b[31m\a\nlatest\nsrc\ntmp\n", f.ok(t, "fs", "ls", testWS, "-o", "name").stdout)
	})

	t.Run("NamesSanitisedOnATerminal", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		r, screen := f.onTerminal(t, "fs", "ls", testWS, "-o", "name")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, screen, "evil^[[31m^G\n")
		require.NotContains(t, screen, "\x1b")
	})

	t.Run("TableIsTheDefaultOnATerminal", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		r, screen := f.onTerminal(t, "fs", "ls", testWS)
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, "README.md\nevil^[[31m^G\nlatest\nsrc/\ntmp/\n", screen)
	})

	t.Run("RelativePath", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		var l cairn.FileListing
		require.NoError(t, json.Unmarshal([]byte(f.ok(t, "fs", "ls", testWS, "src").stdout), &l))
		require.Equal(t, cairn.MountPath+"/src", l.Path)
		require.Len(t, l.Entries, 1)
		require.Equal(t, cairn.MountPath+"/src", f.listed()[0].Path, "relative to the mount")
		f.ok(t, "fs", "ls", testWS, cairn.MountPath+"/src/")
		require.Equal(t, cairn.MountPath+"/src", f.listed()[1].Path, "an absolute path, cleaned")
	})

	t.Run("AFileListsAsItself", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		require.Equal(t, "main.go\n", f.ok(t, "fs", "ls", testWS, "src/main.go", "-o", "table").stdout)
	})

	t.Run("EmptyDirectory", func(t *testing.T) {
		t.Parallel()
		f := newFakeFiles(t)
		require.JSONEq(t, `{"path":"/mnt/cairn/ws","entries":[]}`, f.ok(t, "fs", "ls", testWS).stdout)
		require.Empty(t, f.ok(t, "fs", "ls", testWS, "-o", "table").stdout)
	})

	t.Run("ByName", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		require.Contains(t, f.ok(t, "fs", "ls", "my-ws", "-o", "table").stdout, "src/\n")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		r := f.fails(t, 3, "fs", "ls", testWS, "nope")
		require.Contains(t, r.stderr, "path_not_found")
		require.Contains(t, r.stderr, "HTTP 404")
		require.Empty(t, r.stdout)
	})

	t.Run("ErrUsage", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		f.fails(t, 2, "fs", "ls")
		f.fails(t, 2, "fs", "ls", testWS, "a", "b")
		f.fails(t, 2, "fs", "ls", testWS, "-o", "yaml")
		f.fails(t, 2, "fs", "ls", "not a name")
		require.Empty(t, f.listed())
	})
}

// ls gathers at most 100 000 entries of a directory, says so on stderr,
// and -o json's next_after names where the rest starts.
func TestFSListBounded(t *testing.T) {
	t.Parallel()
	f := newFakeFiles(t)
	for i := range maxListEntries + 5 {
		f.dirs[cairn.MountPath] = append(f.dirs[cairn.MountPath],
			cairn.FileEntry{Name: fmt.Sprintf("f%06d", i), Type: cairn.FileTypeFile, Mode: "0644"})
	}
	r := f.ok(t, "fs", "ls", testWS)
	var l cairn.FileListing
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &l))
	require.Len(t, l.Entries, maxListEntries)
	require.Equal(t, "f099999", l.NextAfter)
	require.Equal(t, "listed the first 100 000 entries of /mnt/cairn/ws; more remain after 'f099999'\n", r.stderr)
	require.Len(t, f.listed(), maxListEntries/cairn.MaxFileListLimit)
	require.Empty(t, f.ok(t, "fs", "ls", testWS, "-q", "-o", "name").stderr, "--quiet")
}

func TestFSStat(t *testing.T) {
	t.Parallel()

	stat := func(t *testing.T, f *fakeFiles, p string) (string, *cairn.FileEntry) {
		t.Helper()
		var doc struct {
			Path  string           `json:"path"`
			Entry *cairn.FileEntry `json:"entry"`
		}
		require.NoError(t, json.Unmarshal([]byte(f.ok(t, "fs", "stat", testWS, p).stdout), &doc))
		return doc.Path, doc.Entry
	}

	t.Run("OK", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		for p, typ := range map[string]string{"src": cairn.FileTypeDir, "src/main.go": cairn.FileTypeFile,
			cairn.MountPath + "/latest": cairn.FileTypeSymlink, "tmp/": cairn.FileTypeDir} {
			got, e := stat(t, f, p)
			require.Equal(t, volumePath(strings.TrimSuffix(p, "/")), got)
			require.Equal(t, typ, e.Type, p)
		}
		require.ElementsMatch(t, []string{cairn.MountPath + "/src", cairn.MountPath + "/src/main.go", cairn.MountPath + "/latest",
			cairn.MountPath + "/tmp"}, f.statted(), "one stat a path, of the clean path")
		_, e := stat(t, f, "latest")
		require.Equal(t, "src/main.go", *e.LinkTarget)
	})

	t.Run("Table", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		out := f.ok(t, "fs", "stat", testWS, "latest", "-o", "table").stdout
		require.Regexp(t, `^Path: +/mnt/cairn/ws/latest\nType: +symlink\nSize: +11 B \(11 bytes\)\n`+
			`Mode: +0777 \(lrwxrwxrwx\)\nModified: +2026-08-14 15:27:00 UTC \(.+ ago\)\nLink target: +src/main\.go\n$`, out)
		f.link(cairn.MountPath+"/trap", "\x1b]0;pwned\a")
		out = f.ok(t, "fs", "stat", testWS, "trap", "-o", "table").stdout
		require.Contains(t, out, "Link target:  ^[]0;pwned^G\n")
		require.NotContains(t, out, "\x1b")
		r := f.fails(t, 1, "fs", "stat", testWS, "evil\x1b[31m\a")
		require.Contains(t, r.stderr, "the path holds a control character (byte 0x1b at offset 18) (invalid_path)",
			"a name no path can hold is refused, not echoed")
		require.Equal(t, cairn.MountPath+"/src\n", f.ok(t, "fs", "stat", testWS, "src", "-o", "name").stdout)
	})

	t.Run("MountRoot", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		for _, p := range []string{cairn.MountPath, cairn.MountPath + "/", ".", ""} {
			got, e := stat(t, f, p)
			require.Equal(t, cairn.MountPath, got)
			require.Equal(t, cairn.FileTypeDir, e.Type)
		}
		require.Equal(t, cairn.MountPath, f.statted()[0])
		require.Regexp(t, "Type: +dir\nSize: +4.0 KiB .*\nMode: +0777 \\(drwxrwxrwx\\)\n",
			f.ok(t, "fs", "stat", testWS, "/mnt/cairn/ws", "-o", "table").stdout, "the root's own mode and time")
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		r := f.fails(t, 3, "fs", "stat", testWS, "src/main.gone")
		require.Contains(t, r.stderr, "the workspace volume has no '/mnt/cairn/ws/src/main.gone' (path_not_found")
		f.fails(t, 3, "fs", "stat", testWS, "nodir/x")
	})

	t.Run("ErrOutsideTheMount", func(t *testing.T) {
		t.Parallel()
		f := fakeTree(t)
		r := f.fails(t, 1, "fs", "stat", testWS, "/etc/passwd")
		require.Contains(t, r.stderr, "path_outside_mount")
		f.fails(t, 1, "fs", "stat", testWS, "../x")
		require.Empty(t, f.statted(), "refused before a call")
		f.fails(t, 2, "fs", "stat", testWS)
	})
}

func TestLsMode(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ typ, mode, want string }{
		{cairn.FileTypeFile, "0644", "-rw-r--r--"},
		{cairn.FileTypeDir, "0755", "drwxr-xr-x"},
		{cairn.FileTypeDir, "1777", "drwxrwxrwt"},
		{cairn.FileTypeDir, "1776", "drwxrwxrwT"},
		{cairn.FileTypeFile, "4755", "-rwsr-xr-x"},
		{cairn.FileTypeFile, "6644", "-rwSr-Sr--"},
		{cairn.FileTypeSymlink, "0777", "lrwxrwxrwx"},
		{cairn.FileTypeOther, "0600", "?rw-------"},
		{cairn.FileTypeFile, "0000", "----------"},
		{cairn.FileTypeFile, "17777", "17777"},
		{cairn.FileTypeFile, "rw\x1b", "rw^["},
	} {
		require.Equal(t, c.want, lsMode(c.typ, c.mode), "%s %s", c.typ, c.mode)
	}
}

func TestFSCat(t *testing.T) {
	t.Parallel()
	const mib = cairn.MaxFileReadBytes
	big := bytes.Repeat([]byte("0123456789abcdef"), (5*mib/2)/16) // 2.5 MiB
	exact := bytes.Repeat([]byte("z"), 2*mib)

	setup := func(t *testing.T) *fakeFiles {
		t.Helper()
		f := fakeTree(t)
		f.add(cairn.MountPath+"/big", cairn.FileTypeFile, "0644", big)
		f.add(cairn.MountPath+"/exact", cairn.FileTypeFile, "0644", exact)
		f.add(cairn.MountPath+"/empty", cairn.FileTypeFile, "0644", []byte{})
		return f
	}
	offsets := func(reads []cairn.FileReadParams) (out [][2]int64) {
		for _, r := range reads {
			out = append(out, [2]int64{r.Offset, r.Length})
		}
		return out
	}

	t.Run("WholeFileInReads", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		require.Equal(t, string(big), f.ok(t, "fs", "cat", testWS, "big").stdout)
		require.Equal(t, [][2]int64{{0, mib}, {mib, mib}, {2 * mib, mib}}, offsets(f.readsSeen()))
	})

	t.Run("StopsAtTheSize", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		require.Equal(t, string(exact), f.ok(t, "fs", "cat", testWS, cairn.MountPath+"/exact").stdout)
		require.Len(t, f.readsSeen(), 2, "no read past the end")
		require.Empty(t, f.ok(t, "fs", "cat", testWS, "empty").stdout)
	})

	t.Run("Range", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		require.Equal(t, string(big[10:110]), f.ok(t, "fs", "cat", testWS, "big", "--offset", "10", "--length", "100").stdout)
		require.Equal(t, [][2]int64{{10, 100}}, offsets(f.readsSeen()))
		out := f.ok(t, "fs", "cat", testWS, "big", "--offset", fmt.Sprint(mib-5), "--length", fmt.Sprint(mib+10)).stdout
		require.Equal(t, string(big[mib-5:2*mib+5]), out)
		require.Equal(t, [][2]int64{{mib - 5, mib}, {2*mib - 5, 10}}, offsets(f.readsSeen()[1:]))
		require.Equal(t, string(big[len(big)-3:]), f.ok(t, "fs", "cat", testWS, "big", "--offset", fmt.Sprint(len(big)-3), "--length", "50").stdout)
		require.Empty(t, f.ok(t, "fs", "cat", testWS, "big", "--offset", "99999999").stdout)
	})

	t.Run("ErrUsage", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		f.fails(t, 2, "fs", "cat", testWS, "big", "--offset", "-1")
		f.fails(t, 2, "fs", "cat", testWS, "big", "--length", "0")
		f.fails(t, 2, "fs", "cat", testWS, "big", "--length", "lots")
		f.fails(t, 2, "fs", "cat", testWS)
		require.Empty(t, f.readsSeen())
	})

	t.Run("ErrDirectory", func(t *testing.T) {
		t.Parallel()
		f := setup(t)
		r := f.fails(t, 1, "fs", "cat", testWS, "src")
		require.Contains(t, r.stderr, "'/mnt/cairn/ws/src' is a directory (path_is_directory, HTTP 400, request req-fake)")
		f.fails(t, 3, "fs", "cat", testWS, "gone")
	})
}

// On a terminal cat writes text only, unless --force; every read is checked
// before it is written.
func TestFSCatTerminal(t *testing.T) {
	t.Parallel()
	const mib = cairn.MaxFileReadBytes
	// A rune of three bytes cut by the first read's end.
	cut := append(bytes.Repeat([]byte("a"), mib-1), []byte("€ and on\n")...)
	lateESC := append(bytes.Repeat([]byte("b"), mib), []byte("\x1b]52;c;cHduZWQ=\a")...)
	f := fakeTree(t)
	f.add(cairn.MountPath+"/bin", cairn.FileTypeFile, "0644", []byte("ELF\x00\x01\x02"))
	f.add(cairn.MountPath+"/ansi", cairn.FileTypeFile, "0644", []byte("red \x1b[31mtext\x1b[0m\n"))
	f.add(cairn.MountPath+"/latin1", cairn.FileTypeFile, "0644", []byte("caf\xe9\n"))
	f.add(cairn.MountPath+"/text", cairn.FileTypeFile, "0644", []byte("tab\there\r\nnext €\n"))
	f.add(cairn.MountPath+"/cut", cairn.FileTypeFile, "0644", cut)
	f.add(cairn.MountPath+"/late", cairn.FileTypeFile, "0644", lateESC)

	for _, name := range []string{"bin", "ansi", "latin1"} {
		r, screen := f.onTerminal(t, "fs", "cat", testWS, name)
		require.Equal(t, 2, r.code, "%s: %s", name, r.stderr)
		require.Contains(t, r.stderr, "is not text")
		require.Contains(t, r.stderr, "--force")
		require.Empty(t, screen, name)
		r, screen = f.onTerminal(t, "fs", "cat", testWS, name, "--force")
		require.Equal(t, 0, r.code, r.stderr)
		require.Equal(t, string(f.content[cairn.MountPath+"/"+name]), screen)
	}
	for _, name := range []string{"text", "cut"} {
		r, screen := f.onTerminal(t, "fs", "cat", testWS, name)
		require.Equal(t, 0, r.code, "%s: %s", name, r.stderr)
		require.Equal(t, string(f.content[cairn.MountPath+"/"+name]), screen)
	}
	r, screen := f.onTerminal(t, "fs", "cat", testWS, "cut", "--offset", fmt.Sprint(mib))
	require.Equal(t, 0, r.code, "a start inside a rune: %s", r.stderr)
	require.Equal(t, string(cut[mib:]), screen)

	r, screen = f.onTerminal(t, "fs", "cat", testWS, "late")
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, fmt.Sprintf("byte %d is binary or a terminal control", mib))
	require.Equal(t, string(lateESC[:mib]), screen, "the text before it, nothing after")

	require.Equal(t, "ELF\x00\x01\x02", f.ok(t, "fs", "cat", testWS, "bin").stdout, "into a pipe: the bytes")
}

func TestTextGate(t *testing.T) {
	t.Parallel()
	euro := []byte("€") // e2 82 ac
	for _, c := range []struct {
		name  string
		lead  bool
		reads [][]byte
		want  []int // check's answer per read
	}{
		{"Text", false, [][]byte{[]byte("héllo\tw\r\n")}, []int{-1}},
		{"NUL", false, [][]byte{[]byte("ab\x00")}, []int{2}},
		{"ESC", false, [][]byte{[]byte("a\x1b[m")}, []int{1}},
		{"DEL", false, [][]byte{[]byte("a\x7f")}, []int{1}},
		{"C1", false, [][]byte{[]byte("a\u009b")}, []int{1}},
		{"Invalid", false, [][]byte{[]byte("ab\xff")}, []int{2}},
		{"RuneCut", false, [][]byte{append([]byte("a"), euro[:1]...), euro[1:]}, []int{-1, -1}},
		{"RuneCutTwice", false, [][]byte{euro[:1], euro[1:2], append(euro[2:], 'x')}, []int{-1, -1, -1}},
		{"RuneCutThenBad", false, [][]byte{euro[:2], []byte("x")}, []int{-1, 0}},
		{"CarryThenControl", false, [][]byte{euro[:2], append(euro[2:], 0x07)}, []int{-1, 1}},
		{"StartInsideARune", true, [][]byte{append(euro[1:], 'x')}, []int{-1}},
		{"LeadOnlyAtTheStart", false, [][]byte{append(euro[1:], 'x')}, []int{0}},
		{"StartInsideThenBad", true, [][]byte{append(euro[2:], 0)}, []int{1}},
	} {
		g := &textGate{skipLead: c.lead}
		var got []int
		for _, r := range c.reads {
			got = append(got, g.check(r))
		}
		require.Equal(t, c.want, got, c.name)
	}
}

func TestArtSaveFormat(t *testing.T) {
	t.Parallel()
	f := fakeTree(t)
	src := cairn.MountPath + "/src/"
	f.ok(t, "art", "save", testWS, src, "--format", "tar.gz")
	require.Equal(t, map[string]any{"source_path": src, "name": "src_tar_gz", "format": "tar.gz"}, f.lastBody())
	f.ok(t, "art", "save", testWS, src, "--format", "zip", "--name", "bundle")
	require.Equal(t, map[string]any{"source_path": src, "name": "bundle", "format": "zip"}, f.lastBody())
	f.ok(t, "art", "save", testWS, cairn.MountPath+"/src/main.go")
	require.Equal(t, map[string]any{"source_path": cairn.MountPath + "/src/main.go", "name": "main_go"}, f.lastBody(),
		"no format: one file, as before")
	r := f.fails(t, 2, "art", "save", testWS, src, "--format", "rar")
	require.Contains(t, r.stderr, `--format "rar": expected tar.gz or zip`)
	require.Len(t, f.bodies, 3)

	long := strings.Repeat("d", cairn.MaxNameLength)
	require.Equal(t, strings.Repeat("d", cairn.MaxNameLength-4)+"_zip", archiveName(cairn.MountPath+"/"+long, "zip"))
	require.NoError(t, cairn.ValidateName("artifact", archiveName(cairn.MountPath+"/"+long, "tar.gz")))
	require.Equal(t, "my_dir_tar_gz", archiveName("/mnt/cairn/ws/my.dir", "tar.gz"))
}

func TestArtUnpack(t *testing.T) {
	t.Parallel()
	f := fakeTree(t)
	art := ulid.Make().String()
	target := cairn.MountPath + "/out"
	var res cairn.UnpackResult
	require.NoError(t, json.Unmarshal([]byte(f.ok(t, "art", "unpack", art, target).stdout), &res))
	require.Equal(t, cairn.UnpackResult{TargetDir: target, Entries: 1204, Bytes: 3 << 20}, res)
	require.Equal(t, map[string]any{"target_dir": target}, f.lastBody())

	out := f.ok(t, "art", "unpack", art, cairn.MountPath+"/out2", "-o", "table").stdout
	require.Equal(t, "Target:   /mnt/cairn/ws/out2\nEntries:  1 204\nBytes:    3.0 MiB (3 145 728 bytes)\n", out)
	require.Equal(t, cairn.MountPath+"/out3\n", f.ok(t, "art", "unpack", art, cairn.MountPath+"/out3", "-o", "name").stdout)

	r := f.fails(t, 4, "art", "unpack", art, target)
	require.Contains(t, r.stderr, "'/mnt/cairn/ws/out' exists (target_exists, HTTP 409, request req-fake)")
	f.fails(t, 2, "art", "unpack", art)
	f.fails(t, 2, "art", "unpack", "no-slash", target)
}

// onTerminal runs the CLI in this process with its stdout on a
// pseudo-terminal in raw mode (the bytes as written, no CRLF), and returns
// what the terminal received.
func (f *fakeFiles) onTerminal(t *testing.T, args ...string) (fsRun, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	require.NoError(t, err)
	defer ptmx.Close()
	_, err = term.MakeRaw(int(tty.Fd()))
	require.NoError(t, err)
	var screen bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(&screen, ptmx) // ends with EIO once the terminal closed
	}()
	r := f.cliTo(t, tty, args...)
	require.NoError(t, tty.Close())
	<-done
	return r, screen.String()
}
