package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
	"github.com/cairn-dev/cairn/internal/tmuxtest"
)

func TestMain(m *testing.M) { stacktest.Main(m) }

// seen is how long a live change may take to reach the screen.
const seen = 15 * time.Second

// liveStack is a real server with the maintainer, a client of it, and a
// READY workspace holding two artifacts.
type liveStack struct {
	srv   *stacktest.Server
	api   *client.Client
	ws    *cairn.Workspace
	kept  *cairn.Artifact
	other *cairn.Artifact
}

func startLiveStack(t *testing.T) *liveStack {
	t.Helper()
	srv := stacktest.StartServer(t, stacktest.ServerOptions{Maintainer: true})
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ctx := t.Context()
	ws, err := api.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "ws-alpha"})
	require.NoError(t, err)
	require.NoError(t, api.SetupVolume(ctx, ws.ID))
	upload := func(name, body string) *cairn.Artifact {
		path := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		a, err := api.Upload(ctx, ws.ID, path, client.UploadOptions{Name: name})
		require.NoError(t, err)
		return a
	}
	return &liveStack{srv: srv, api: api, ws: ws, kept: upload("report_csv", "a,b\n1,2\n"), other: upload("notes", "hello")}
}

// openTUI runs the built cairn-tui at 120×40 in tmux against the stack,
// inside a shell that reports its exit status and stays usable after it.
func (s *liveStack) openTUI(t *testing.T) *tmuxtest.Pane {
	t.Helper()
	bin := stacktest.Binary(t, "cairn-tui")
	p := tmuxtest.Start(t, tmuxtest.Options{Env: []string{"NO_COLOR=1", "CAIRN_URL=" + s.srv.URL,
		"CAIRN_TOKEN=" + s.srv.Token, "XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir()}},
		"sh", "-c", bin+"; echo tui-exit-$?; exec sh")
	return p
}

// TestRealTerminal drives the real binary as an operator would: the list
// and the live badge; a workspace made by another process appears; an
// object lost behind cairn's back shows as MISSING with no key pressed;
// y copies; q exits 0 and leaves the terminal usable.
func TestRealTerminal(t *testing.T) {
	s := startLiveStack(t)
	p := s.openTUI(t)
	p.SetClipboard()
	// One flow, no subtests: the pane belongs to this test.

	t.Log("the list and the live badge")
	p.WaitForText(seen, "● live", "ws-alpha", "● READY")

	t.Log("a workspace created by another process appears with no key pressed")
	cmd := exec.CommandContext(t.Context(), stacktest.Binary(t, "cairn"), "ws", "create", "ws-from-cli")
	cmd.Env = append(os.Environ(), "CAIRN_URL="+s.srv.URL, "CAIRN_TOKEN="+s.srv.Token, "XDG_CONFIG_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	p.WaitForText(seen, "ws-from-cli")

	t.Log("an object lost behind cairn's back shows as MISSING with no key pressed")
	p.Keys("g", "Enter") // the first workspace: ws-alpha
	p.WaitForText(seen, "ws-alpha", "report_csv", "notes")
	s.srv.LoseObject(t, s.kept.ID, s.kept.ObjectKey)
	_, err = s.api.Sweep(t.Context(), "")
	require.NoError(t, err)
	screen := p.WaitForText(seen, "! 1 missing", "report_csv in ws-alpha is MISSING_OBJECT")
	require.Contains(t, lineWith(screen, "report_csv"), "! MISSING", "the row itself shows the state")

	t.Log("y copies the selected name")
	p.Keys("j") // from notes (first by name) to report_csv; seen before the next key
	p.WaitForText(seen, "▸ report_csv")
	p.Keys("y")
	p.WaitForText(seen, "copied name report_csv")
	require.Eventually(t, func() bool { return strings.Contains(p.Buffer(), "report_csv") }, seen, 100*time.Millisecond,
		"y puts the name in the terminal's clipboard")

	t.Log("back at the root, q exits 0 and leaves the terminal usable")
	p.Keys("h")
	p.WaitForText(seen, "workspaces (2)")
	p.Keys("q")
	p.WaitForText(seen, "tui-exit-0")
	p.Type("stty -a | tr ' ' '\\n' | grep -x -e icanon -e echo | tr '\\n' +; echo")
	p.Keys("Enter")
	p.WaitForText(seen, "icanon+echo+")
}

// lineWith is the screen line holding text.
func lineWith(screen, text string) string {
	for _, line := range strings.Split(screen, "\n") {
		if strings.Contains(line, text) {
			return line
		}
	}
	return ""
}

// TestRealTerminalTransfersAndShell drives an upload and a shell through
// the real binary: a rate-limited 64 MiB upload shows its progress, then
// RECORDED, and its bytes come back intact; s opens a shell into the
// workspace, a resize reaches it, its exit status comes back to the TUI,
// whose next key is acted on; ctrl+] leaves a second shell running on the
// server, as the toast says; the file written in the shell is saved from
// the volume as an artifact.
func TestRealTerminalTransfersAndShell(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{
		Config: "shell: {enable: true, image: " + stacktest.Shell(t) + "}\n"})
	s := startLiveStackOn(t, srv)
	big := filepath.Join(t.TempDir(), "big.bin")
	writeRandom(t, big, 64<<20)

	bin := stacktest.Binary(t, "cairn-tui")
	p := tmuxtest.Start(t, tmuxtest.Options{Env: []string{"NO_COLOR=1", "CAIRN_URL=" + srv.URL,
		"CAIRN_TOKEN=" + srv.Token, "XDG_CONFIG_HOME=" + t.TempDir(), "XDG_STATE_HOME=" + t.TempDir(),
		"CAIRN_TUI_TRANSFER_RATE_LIMIT=16MiB"}}, bin)
	p.WaitForText(seen, "● live", "ws-alpha")
	p.Keys("Enter")
	p.WaitForText(seen, "ws-alpha ▸ artifacts", "report_csv")

	t.Log("a rate-limited upload shows its progress, then RECORDED")
	p.Keys("u")
	p.WaitForText(seen, "Upload to ws-alpha")
	p.Type(big)
	p.Keys("Enter")
	percents := map[string]bool{}
	p.WaitFor("two percentages, a rate and an ETA while uploading", time.Minute, func(screen string) bool {
		line := lineWith(screen, "uploading")
		if pct := percentIn(line); pct != "" && strings.Contains(line, "/s") && strings.Contains(line, "ETA") {
			percents[pct] = true
		}
		return len(percents) >= 2
	})
	p.WaitFor("big_bin RECORDED", time.Minute, func(screen string) bool {
		return strings.Contains(lineWith(screen, "big_bin"), "✓ RECORDED")
	})
	arts, err := s.api.FindArtifacts(t.Context(), cairn.ArtifactFilter{WorkspaceID: s.ws.ID, Names: []string{"big_bin"}})
	require.NoError(t, err)
	require.Len(t, arts, 1)
	back := filepath.Join(t.TempDir(), "back.bin")
	_, err = s.api.Download(t.Context(), arts[0].ID, back, client.DownloadOptions{})
	require.NoError(t, err)
	require.Equal(t, sha256File(t, big), sha256File(t, back), "the stored bytes are the file's")

	t.Log("s opens a shell into the workspace")
	p.Keys("s")
	p.WaitForText(seen, "/mnt/cairn/ws #") // the shell's prompt: typing before it would echo locally
	p.Type("echo cairn-$((6*7)) > /mnt/cairn/ws/probe.txt; cat /mnt/cairn/ws/probe.txt")
	p.Keys("Enter")
	p.WaitForText(seen, "cairn-42")
	// The shell itself watches its terminal's size; the resize travels
	// SIGWINCH → RESIZE frame → server → Docker.
	p.Type(`while [ "$(stty size)" != "40 100" ]; do sleep 0.1; done; echo resized-$(stty size | tr ' ' x)`)
	p.Keys("Enter")
	p.Resize(100, 40)
	p.WaitForText(seen, "resized-40x100")
	p.Type("exit 3")
	p.Keys("Enter")
	p.WaitForText(seen, "shell exited with status 3", "Press Enter to return")
	p.Keys("Enter")
	p.WaitForText(seen, "shell exited: status 3 (ws-alpha)")
	// The cursor stayed on report_csv, below big_bin (by name).
	p.WaitForText(seen, "▸ report_csv")
	p.Keys("k")
	p.WaitForText(seen, "▸ big_bin") // the first key after the shell is acted on
	require.NotContains(t, p.Capture(), "\x1b[", "no stray escape bytes on screen")

	t.Log("ctrl+] leaves a shell running on the server, and the toast says so")
	p.Keys("s")
	p.WaitForText(seen, "/mnt/cairn/ws #")
	p.Keys("C-]")
	p.WaitForText(seen, "detached from the shell on ws-alpha: it keeps running — W lists it to attach again")
	shells, err := s.api.FindShells(t.Context(), s.ws.ID)
	require.NoError(t, err)
	require.Len(t, shells.Shells, 1, "the shell left is still running")
	require.NotNil(t, shells.Shells[0].Detached)
	require.True(t, *shells.Shells[0].Detached, "with no writer")

	t.Log("the file written in the shell is saved from the volume")
	p.Keys("i")
	p.WaitForText(seen, "File in the volume", "/mnt/cairn/ws/")
	p.Type("probe.txt") // after the mount path the form starts with
	p.Keys("Enter")
	p.WaitFor("probe_txt RECORDED", time.Minute, func(screen string) bool {
		return strings.Contains(lineWith(screen, "probe_txt"), "✓ RECORDED")
	})
	p.Keys("h")
	p.WaitForText(seen, "workspaces (1)")
	p.Keys("q")
}

// startLiveStackOn seeds the workspace and artifacts of startLiveStack on
// a server started with options of the test's own.
func startLiveStackOn(t *testing.T, srv *stacktest.Server) *liveStack {
	t.Helper()
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ws, err := api.CreateWorkspace(t.Context(), cairn.WorkspaceCreate{Name: "ws-alpha"})
	require.NoError(t, err)
	require.NoError(t, api.SetupVolume(t.Context(), ws.ID))
	path := filepath.Join(t.TempDir(), "report.csv")
	require.NoError(t, os.WriteFile(path, []byte("a,b\n"), 0o600))
	kept, err := api.Upload(t.Context(), ws.ID, path, client.UploadOptions{Name: "report_csv"})
	require.NoError(t, err)
	return &liveStack{srv: srv, api: api, ws: ws, kept: kept}
}

func writeRandom(t *testing.T, path string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	_, err = io.CopyN(f, rand.Reader, size)
	require.NoError(t, err)
}

func sha256File(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// percentIn finds "NN%" in a line.
func percentIn(line string) string {
	for _, f := range strings.Fields(line) {
		if strings.HasSuffix(f, "%") && len(f) > 1 {
			return f
		}
	}
	return ""
}
