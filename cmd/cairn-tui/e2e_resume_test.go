package main

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

// TestRealTerminalResumesAnInterruptedUpload is the TUI side of
// resumable uploads with the real binary: an upload of a 72 MiB file
// interrupted after 3 of its 15 parts (the Go client in this process,
// its context cancelled from the part report) leaves its state under
// XDG_STATE_HOME; cairn-tui started with that XDG_STATE_HOME offers to
// resume it — the dialog read at 120×40 and at 60×16 — and r resumes it:
// the client's notice is a toast, the tray counts the parts, and the
// artifact appears RECORDED with the file's size and bytes.
func TestRealTerminalResumesAnInterruptedUpload(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{PartSize: cairn.MinPartSize})
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-alpha"})
	require.NoError(t, err)
	const size = 72 << 20 // 15 parts of 5 MiB
	big := filepath.Join(t.TempDir(), "big.bin")
	writeRandom(t, big, size)

	t.Log("an upload interrupted after 3 parts leaves its state behind")
	stateHome := t.TempDir()
	stateDir := filepath.Join(stateHome, "cairn", "uploads") // the client's default under XDG_STATE_HOME
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err = api.Upload(ctx, ws.ID, big, client.UploadOptions{Name: "big_bin", StateDir: stateDir, Parallel: 1, MultipartAbove: 64 << 20,
		PartProgress: func(done, _ int) {
			if done >= 3 {
				cancel()
			}
		}})
	require.True(t, errors.Is(err, context.Canceled), "interrupted: %v", err)
	pending, err := api.PendingUploads(stateDir)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	parts, _, err := api.PendingProgress(t.Context(), pending[0])
	require.NoError(t, err)
	require.Equal(t, 3, parts)
	require.Equal(t, 15, pending[0].PartCount)

	p := tmuxtest.Start(t, tmuxtest.Options{Env: []string{"NO_COLOR=1", "CAIRN_URL=" + srv.URL, "CAIRN_TOKEN=" + srv.Token,
		"XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + stateHome, "CAIRN_TUI_TRANSFER_RATE_LIMIT=8MiB"}},
		"sh", "-c", stacktest.Binary(t, "cairn-tui")+"; echo tui-exit-$?; exec sh")

	t.Log("the offer at 120×40")
	screen := p.WaitForText(seen, "Resume an interrupted upload", "1 upload did not finish in an earlier run:",
		"↑ big_bin into ws-alpha · 72.0 MiB · started now", "big.bin · 3 of 15 parts stored",
		"r resume all · D discard all · esc later")
	t.Logf("120×40:\n%s", screen)
	require.Contains(t, lineWith(screen, "3 of 15 parts stored"), shownDir(t, big), "the path's tail shows")

	t.Log("the offer at 60×16")
	p.Resize(60, 16)
	screen = p.WaitForText(seen, "Resume an interrupted upload", "↑ big_bin into ws-alpha · 72.0 MiB",
		"…", "big.bin · 3 of 15 parts stored", "r resume all · D discard all · esc later")
	t.Logf("60×16:\n%s", screen)
	for _, line := range strings.Split(strings.TrimRight(screen, "\n"), "\n") {
		require.LessOrEqual(t, len([]rune(line)), 60, "nothing runs past the width: %q", line)
	}
	p.Resize(120, 40)
	p.WaitFor("the offer redrawn at 120 columns", seen, func(screen string) bool {
		return strings.Contains(lineWith(screen, "3 of 15 parts stored"), "InterruptedUpload")
	})

	t.Log("r resumes it: the notice, the parts in the tray, then RECORDED")
	p.Keys("r")
	screen = p.WaitForText(seen, "i big_bin: resumed: 3 of 15 parts already stored")
	t.Logf("the notice:\n%s", lastLines(screen, 4))
	for _, m := range p.WaitForValues(time.Minute, regexp.MustCompile(`uploading .* (\d+)/15 parts`), 2) {
		t.Logf("the tray: %s", m[0])
	}
	p.WaitForText(time.Minute, "✓ uploaded big_bin (72.0 MiB)")
	p.Keys("Enter")
	p.WaitFor("big_bin RECORDED at 72.0 MiB", seen, func(screen string) bool {
		line := lineWith(screen, "▸ big_bin")
		return strings.Contains(line, "✓ RECORDED") && strings.Contains(line, "72.0 MiB")
	})
	arts, err := api.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: ws.ID, Names: []string{"big_bin"}})
	require.NoError(t, err)
	require.Len(t, arts, 1)
	require.EqualValues(t, size, arts[0].Size)
	back := filepath.Join(t.TempDir(), "back.bin")
	_, err = api.Download(t.Context(), arts[0].ID, back, client.DownloadOptions{})
	require.NoError(t, err)
	require.Equal(t, sha256File(t, big), sha256File(t, back), "the stored bytes are the file's")
	pending, err = api.PendingUploads(stateDir)
	require.NoError(t, err)
	require.Empty(t, pending, "nothing is left to offer at the next start")
	p.Keys("h")
	p.WaitForText(seen, "workspaces (1)")
	p.Keys("q")
	p.WaitForText(seen, "tui-exit-0")
}

// shownDir is the last directory of path and its file: what the offer
// keeps of a long path, which it cuts from the left.
func shownDir(t *testing.T, path string) string {
	t.Helper()
	return filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
}
