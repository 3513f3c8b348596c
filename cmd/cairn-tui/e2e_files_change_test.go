package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
)

// TestRealTerminalFilesChange changes a volume from the files pane with the
// real binary on the real stack, checking the volume through the API after
// each change: n makes a directory; u uploads a local file into it; e edits
// a file a container wrote, $EDITOR being a script that rewrites a line
// and adds one; R renames it; D deletes a file after y and a directory
// after its typed name.
func TestRealTerminalFilesChange(t *testing.T) {
	srv, api, ws := filesStack(t, "mkdir -p /mnt/cairn/ws/out && printf 'cairn-42\\nsecond line\\n' > /mnt/cairn/ws/out/probe.txt")
	ctx := t.Context()
	names := func(dir string) []string {
		t.Helper()
		l, err := api.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: dir})
		require.NoError(t, err)
		var out []string
		for _, e := range l.Entries {
			out = append(out, e.Name)
		}
		return out
	}
	content := func(p string) string {
		t.Helper()
		fc, err := api.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: p})
		require.NoError(t, err)
		return string(fc.Data)
	}

	scratch := t.TempDir()
	editor := filepath.Join(scratch, "editor.sh")
	require.NoError(t, os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/cairn-42/cairn-43/' \"$1\"\necho 'edited in tmux' >> \"$1\"\n"), 0o700))
	local := filepath.Join(scratch, "summary.txt")
	require.NoError(t, os.WriteFile(local, []byte("uploaded from the laptop\n"), 0o600))

	p := startTUI(t, srv, "EDITOR="+editor)
	p.WaitForText(seen, "● live", "ws-alpha", "● READY")
	p.Keys("f")
	p.WaitForText(seen, "files /mnt/cairn/ws (1)", "out/")

	t.Log("n makes a directory; the cursor goes to it")
	p.Keys("n")
	p.WaitForText(seen, "New directory in /mnt/cairn/ws")
	p.Type("reports")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "made the directory /mnt/cairn/ws/reports", "files /mnt/cairn/ws (2)", "▸ reports/")
	require.Equal(t, []string{"out", "reports"}, names(cairn.MountPath))

	t.Log("u uploads a local file into it, named as the file")
	p.Keys("Enter")
	p.WaitForText(seen, "files /mnt/cairn/ws/reports (0)")
	p.Keys("u")
	p.WaitForText(seen, "Upload a local file into /mnt/cairn/ws/reports")
	p.Type(local)
	p.WaitForText(seen, "/mnt/cairn/ws/reports/summary.txt")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "files /mnt/cairn/ws/reports (1)", "▸ summary.txt")
	require.Equal(t, "uploaded from the laptop\n", content("/mnt/cairn/ws/reports/summary.txt"))

	t.Log("e edits a file a container wrote, in $EDITOR, and writes it back")
	p.Keys("h")
	p.WaitForText(seen, "files /mnt/cairn/ws (2)", "▸ reports/")
	p.Keys("g", "Enter")
	p.WaitForText(seen, "files /mnt/cairn/ws/out (1)", "▸ probe.txt")
	p.Keys("e")
	edited := "cairn-43\nsecond line\nedited in tmux\n"
	p.WaitForText(time.Minute, fmt.Sprintf("saved your edit of /mnt/cairn/ws/out/probe.txt (%d B)", len(edited)))
	require.Equal(t, edited, content("/mnt/cairn/ws/out/probe.txt"))
	left, err := filepath.Glob(filepath.Join(os.TempDir(), "cairn-edit-*", "probe.txt"))
	require.NoError(t, err)
	require.Empty(t, left, "the private copy is removed")

	t.Log("R renames it; the cursor follows")
	p.Keys("R")
	p.WaitForText(seen, "Rename or move probe.txt", "/mnt/cairn/ws/out/probe.txt")
	for range len("probe.txt") {
		p.Keys("BSpace")
	}
	p.Type("final.txt")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "renamed /mnt/cairn/ws/out/probe.txt to final.txt", "▸ final.txt")
	require.Equal(t, []string{"final.txt"}, names("/mnt/cairn/ws/out"))
	require.Equal(t, edited, content("/mnt/cairn/ws/out/final.txt"))

	t.Log("D deletes a file after y")
	p.Keys("D")
	p.WaitForText(seen, "Delete /mnt/cairn/ws/out/final.txt", "(y/N)")
	p.Keys("y")
	p.WaitForText(time.Minute, "deleted /mnt/cairn/ws/out/final.txt", "/mnt/cairn/ws/out is empty")
	require.Empty(t, names("/mnt/cairn/ws/out"))

	t.Log("D deletes a directory with everything in it after its typed name")
	p.Keys("h")
	p.WaitForText(seen, "files /mnt/cairn/ws (2)", "▸ out/")
	p.Keys("j")
	p.WaitForText(seen, "▸ reports/")
	p.Keys("D")
	p.WaitForText(seen, "Delete /mnt/cairn/ws/reports and everything in it?", "Type reports to confirm")
	p.Type("reports")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "deleted /mnt/cairn/ws/reports", "files /mnt/cairn/ws (1)")
	require.Equal(t, []string{"out"}, names(cairn.MountPath))

	require.NotContains(t, p.Capture(), "\x1b[", "no stray escape bytes on screen")
	p.Keys("q")
	p.WaitForText(seen, "workspaces (")
	p.Keys("q")
	require.Zero(t, p.WaitExit(seen))
}
