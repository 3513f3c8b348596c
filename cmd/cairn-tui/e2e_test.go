package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
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
		"CAIRN_TOKEN=" + s.srv.Token, "XDG_CONFIG_HOME=" + t.TempDir()}},
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
	s.loseObject(t, s.kept)
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

// loseObject deletes an artifact's object straight from the store, and
// backdates its content so that the maintainer's grace is over.
func (s *liveStack) loseObject(t *testing.T, a *cairn.Artifact) {
	t.Helper()
	_, err := s.srv.S3.Client().DeleteObject(t.Context(), &awss3.DeleteObjectInput{
		Bucket: aws.String(s.srv.Bucket), Key: aws.String(a.ObjectKey)})
	require.NoError(t, err)
	conn, err := pgx.Connect(t.Context(), s.srv.Database)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(t.Context(), `UPDATE artifacts SET content_written_at = now() - interval '1 day' WHERE id = $1`, a.ID)
	require.NoError(t, err)
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
