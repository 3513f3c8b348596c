package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// put refuses an input over the server's bound before it sends anything,
// whether a file's size says so or stdin runs past it, and sends one at
// the bound whole.
func TestFSPutBound(t *testing.T) {
	t.Parallel()
	const bound = 16
	f := newFakeFiles(t)
	f.writeMax = bound
	dir := t.TempDir()
	local := func(name string, n int) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, bytes.Repeat([]byte("x"), n), 0o600))
		return p
	}
	refused := func(r fsRun) {
		t.Helper()
		require.Equal(t, 1, r.code, r.stderr)
		require.Contains(t, r.stderr, "body_too_large")
		require.Contains(t, r.stderr, "at most 16 B")
		require.Contains(t, r.stderr, "'cairn art upload WS FILE', then 'cairn art load ART PATH'")
		require.NotContains(t, r.stderr, "HTTP", "decided here, not by the server")
	}

	r := f.cli(t, "fs", "put", testWS, "big", local("big", bound+1))
	refused(r)
	require.Contains(t, r.stderr, "big' is 17 B")
	refused(f.cliIn(t, bytes.NewReader(make([]byte, bound+1)), "fs", "put", testWS, "big"))
	refused(f.cliIn(t, strings.NewReader(strings.Repeat("y", 1<<20)), "fs", "put", testWS, "big", "-"))
	require.Empty(t, f.written(), "nothing was sent")

	f.ok(t, "fs", "put", testWS, "edge", local("edge", bound))
	f.cliIn(t, strings.NewReader("from stdin"), "fs", "put", testWS, "/mnt/cairn/ws/in", "-")
	writes := f.written()
	require.Len(t, writes, 2)
	require.Equal(t, cairn.MountPath+"/edge", writes[0].Path)
	require.Equal(t, bytes.Repeat([]byte("x"), bound), writes[0].Data)
	require.Equal(t, cairn.FileWriteParams{Path: cairn.MountPath + "/in", Data: []byte("from stdin")}, writes[1])
}

// Flags the server would refuse are refused as usage, before a request.
func TestFSPutUsage(t *testing.T) {
	t.Parallel()
	f := newFakeFiles(t)
	f.writeMax = 1 << 20
	in := strings.NewReader("x")
	for _, args := range [][]string{
		{"--mode", "4755"},
		{"--mode", "rw"},
		{"--if-match", "abc", "--create-only"},
	} {
		r := f.cliIn(t, in, append([]string{"fs", "put", testWS, "f"}, args...)...)
		require.Equal(t, 2, r.code, "%v: %s", args, r.stderr)
	}
	r := f.cliIn(t, in, "fs", "put", testWS, "f\x1b[2J")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "invalid_path")
	require.NotContains(t, r.stderr, "\x1b")
	require.Equal(t, 2, f.cliIn(t, in, "fs", "mkdir", testWS, "d", "--mode", "1777").code)
	require.Empty(t, f.written())

	f.cliIn(t, strings.NewReader("x"), "fs", "put", testWS, "f", "--mode", "0600", "--if-match", "etag-0")
	require.Equal(t, []cairn.FileWriteParams{{Path: cairn.MountPath + "/f", Data: []byte("x"), Mode: "0600",
		IfMatch: `"etag-0"`}}, f.written(), "the etag quoted, as a header carries it")
}

// put's table is the new file as stat shows it, its etag included.
func TestFSPutTable(t *testing.T) {
	t.Parallel()
	f := newFakeFiles(t)
	f.writeMax = 1 << 20
	r := f.cliIn(t, strings.NewReader("hello"), "fs", "put", testWS, "greeting", "-o", "table")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `^Path: +/mnt/cairn/ws/greeting\nType: +file\nSize: +5 B \(5 bytes\)\nMode: +0666 \(-rw-rw-rw-\)\n`+
		`Modified: .*\nETag: +etag-1\n$`, r.stdout)
	r = f.cliIn(t, strings.NewReader("hello"), "fs", "put", testWS, "greeting", "-o", "name")
	require.Equal(t, "/mnt/cairn/ws/greeting\n", r.stdout)
}
