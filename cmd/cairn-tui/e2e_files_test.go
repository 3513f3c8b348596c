package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestRealTerminalFiles is issue 20's files pane with the real binary on
// the real stack: a directory made in the volume by a container (as a tool
// run would) lists with its symlink; a file previews; i saves it and packs
// a directory; X unpacks the archive; L loads an artifact back; a file a
// container writes, then removes, in the directory shown comes and goes
// with no key pressed (the server's file watch). No path is typed: each
// comes from the pane's listing, as the operator would take it.
func TestRealTerminalFiles(t *testing.T) {
	srv, api, ws := filesStack(t, "mkdir -p /mnt/cairn/ws/out/logs && "+
		"printf 'cairn-42\\nsecond line\\n' > /mnt/cairn/ws/out/probe.txt && "+
		"echo started > /mnt/cairn/ws/out/logs/run.log && ln -s out/logs /mnt/cairn/ws/latest")
	ctx := t.Context()

	p := startTUI(t, srv)
	p.WaitForText(seen, "● live", "ws-alpha", "● READY")

	t.Log("f lists the mount root: the directory and the symlink with its target")
	p.Keys("f")
	p.WaitForText(seen, "files /mnt/cairn/ws (2)", "latest -> out/logs", "out/")
	p.Keys("Enter") // on latest, the first by name: a link is not entered
	p.WaitForText(seen, "latest is a symlink to out/logs — links are shown, never followed")
	p.Keys("j", "Enter")
	p.WaitForText(seen, "files /mnt/cairn/ws/out (2)", "logs/", "probe.txt")

	t.Log("a file previews through the content route")
	p.Keys("j")
	p.WaitForText(seen, "▸ probe.txt")
	p.Keys("Enter")
	p.WaitForText(seen, "probe.txt ▸ preview", "cairn-42", "second line")
	p.Keys("Escape")
	// The files pane's title shows behind the preview too: only the
	// preview gone says the Escape was read, and the next key is the pane's.
	p.WaitFor("the preview closed", seen, func(screen string) bool {
		return strings.Contains(screen, "files /mnt/cairn/ws/out (2)") && !strings.Contains(screen, "▸ preview")
	})

	t.Log("i saves the file as an artifact, its path and name filled in")
	p.Keys("i")
	p.WaitForText(seen, "Save a volume file of ws-alpha", "/mnt/cairn/ws/out/probe.txt", "probe_txt")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "saved /mnt/cairn/ws/out/probe.txt as probe_txt (21 B)")

	t.Log("i on a directory packs it as tar.gz")
	p.Keys("k")
	p.WaitForText(seen, "▸ logs/")
	p.Keys("i")
	p.WaitForText(seen, "Pack a volume directory of ws-alpha", "/mnt/cairn/ws/out/logs", "logs_tar_gz")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "packed /mnt/cairn/ws/out/logs as logs_tar_gz")

	t.Log("X unpacks the archive into a new directory at the root, named after it")
	p.Keys("h")
	p.WaitForText(seen, "files /mnt/cairn/ws (2)", "▸ out/")
	p.Keys("X")
	p.WaitForText(seen, "Unpack an archive into /mnt/cairn/ws", "logs_tar_gz", "probe_txt")
	p.Keys("Enter") // logs_tar_gz, the first by name
	p.WaitForText(seen, "Unpack logs_tar_gz into the volume of ws-alpha", "/mnt/cairn/ws/logs")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "unpacked logs_tar_gz into /mnt/cairn/ws/logs (", "files /mnt/cairn/ws (3)", "logs/")

	t.Log("L loads an artifact into the directory listed")
	p.Keys("L")
	p.WaitForText(seen, "Load an artifact into /mnt/cairn/ws")
	p.Keys("Down", "Enter") // probe_txt
	p.WaitForText(seen, "Load probe_txt into the volume of ws-alpha", "/mnt/cairn/ws/probe_txt")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "loaded probe_txt into /mnt/cairn/ws/probe_txt", "files /mnt/cairn/ws (4)")

	t.Log("a tool's write into the directory shown lists without a key press; the cursor stays")
	// The watch is on once the server has said hello: its watcher is ready.
	p.WaitForText(time.Minute, "files /mnt/cairn/ws (4) ● watching", "▸ probe_txt")
	stacktest.RunInVolume(t, srv.App, ws.VolumeName, "echo from a tool > /mnt/cairn/ws/from-tool.txt")
	p.WaitForText(seen, "files /mnt/cairn/ws (5) ● watching", "from-tool.txt", "▸ probe_txt")
	stacktest.RunInVolume(t, srv.App, ws.VolumeName, "rm /mnt/cairn/ws/from-tool.txt")
	p.WaitFor("the removed file gone", seen, func(screen string) bool {
		return strings.Contains(screen, "files /mnt/cairn/ws (4) ● watching") && !strings.Contains(screen, "from-tool.txt")
	})

	t.Log("the volume holds what the screen says")
	l, err := api.ListFiles(ctx, ws.ID, cairn.FileListParams{Path: "/mnt/cairn/ws/logs"})
	require.NoError(t, err)
	require.Len(t, l.Entries, 1)
	require.Equal(t, "run.log", l.Entries[0].Name)
	fc, err := api.ReadFile(ctx, ws.ID, cairn.FileReadParams{Path: "/mnt/cairn/ws/probe_txt"})
	require.NoError(t, err)
	require.Equal(t, "cairn-42\nsecond line\n", string(fc.Data))
	arts, err := api.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: ws.ID})
	require.NoError(t, err)
	mimes := map[string]string{}
	for _, a := range arts {
		mimes[a.Name] = a.MIMEType
	}
	require.Len(t, mimes, 2)
	require.Contains(t, mimes, "probe_txt")
	require.Equal(t, cairn.MIMEGzip, mimes["logs_tar_gz"], "the directory was packed as tar.gz")
	require.NotContains(t, p.Capture(), "\x1b[", "no stray escape bytes on screen")
	// One q at a time, each seen to land: back to the workspaces, then out.
	p.Keys("q")
	p.WaitForText(seen, "workspaces (")
	p.Keys("q")
	require.Zero(t, p.WaitExit(seen))
}

// filesStack starts a server with one READY workspace, ws-alpha, whose
// volume a container has prepared with script.
func filesStack(t *testing.T, script string) (*stacktest.Server, *client.Client, *cairn.Workspace) {
	t.Helper()
	srv := stacktest.StartServer(t, stacktest.ServerOptions{})
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-alpha"})
	require.NoError(t, err)
	require.NoError(t, api.SetupVolume(t.Context(), ws.ID))
	d, err := api.InspectWorkspace(t.Context(), ws.ID)
	require.NoError(t, err)
	stacktest.RunInVolume(t, srv.App, d.Workspace.VolumeName, script)
	return srv, api, d.Workspace
}
