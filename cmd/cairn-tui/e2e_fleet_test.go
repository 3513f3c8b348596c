package main

import (
	"fmt"
	"os"
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

// TestRealTerminalFleet is the fleet console on two real servers, as an
// operator with two deployments works them: one config file with two
// contexts; :ctx switches and each shows its own workspaces, live; 50
// marked artifacts go with one typed confirmation and the events show them
// gone; :shells lists a shell opened by `cairn shell` in another terminal,
// kills it — the CLI prints terminated — and :audit shows the kill.
func TestRealTerminalFleet(t *testing.T) {
	alpha := stacktest.StartServer(t, stacktest.ServerOptions{Config: "shell: {enable: true, image: " + stacktest.Shell(t) + "}\n"})
	bravo := stacktest.StartServer(t, stacktest.ServerOptions{})
	apiA := fleetClient(t, alpha)
	apiB := fleetClient(t, bravo)
	ctx := t.Context()
	wsA, err := apiA.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "ws-alpha"})
	require.NoError(t, err)
	require.NoError(t, apiA.SetupVolume(ctx, wsA.ID))
	seedArtifacts(t, apiA, wsA.ID, 50)
	_, err = apiB.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "ws-bravo"})
	require.NoError(t, err)

	home := t.TempDir()
	tokenFile := filepath.Join(home, "bravo.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(bravo.Token+"\n"), 0o600))
	cfgDir := filepath.Join(home, "cairn")
	require.NoError(t, os.MkdirAll(cfgDir, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.yaml"), fmt.Appendf(nil,
		"current-context: alpha\ncontexts:\n"+
			"  - {name: alpha, server: %q, token_env: ALPHA_TOKEN}\n"+
			"  - {name: bravo, server: %q, token_file: %q}\n", alpha.URL, bravo.URL, tokenFile), 0o600))
	env := []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + t.TempDir(), "ALPHA_TOKEN=" + alpha.Token}
	p := tmuxtest.Start(t, tmuxtest.Options{Env: env}, stacktest.Binary(t, "cairn-tui"))

	t.Log("the current context, named in the header")
	p.WaitForText(seen, "● live", "ws-alpha", "alpha")

	t.Log(":ctx bravo switches: bravo's workspaces, live")
	palette(p, "ctx bravo")
	screen := p.WaitForText(seen, "ws-bravo", "context bravo")
	require.NotContains(t, screen, "ws-alpha", "alpha's rows went with its context")
	p.WaitForText(seen, "● live")
	_, err = apiB.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "ws-bravo-2"})
	require.NoError(t, err)
	p.WaitForText(seen, "ws-bravo-2")

	t.Log(":ctx alpha comes back, live too")
	palette(p, "ctx alpha")
	screen = p.WaitForText(seen, "ws-alpha", "context alpha")
	require.NotContains(t, screen, "ws-bravo")
	p.WaitForText(seen, "● live")

	t.Log("50 marked artifacts deleted with one typed confirmation")
	p.Keys("Enter")
	p.WaitForText(seen, "artifacts (50)")
	p.Keys("C-a")
	p.WaitForText(seen, "[50 marked]")
	p.Keys("D")
	p.WaitForText(seen, "Delete the 50 marked artifacts of ws-alpha?")
	p.Type("delete 50")
	p.Keys("Enter")
	p.WaitForText(time.Minute, "50 deleted")
	p.Keys("Escape")
	p.WaitForText(seen, "artifacts (0)")
	left, err := apiA.FindArtifacts(ctx, cairn.ArtifactFilter{WorkspaceID: wsA.ID})
	require.NoError(t, err)
	require.Empty(t, left, "the server has them gone too")

	t.Log(":shells lists a shell opened by cairn shell in another terminal")
	cli := tmuxtest.Start(t, tmuxtest.Options{Env: []string{"NO_COLOR=1", "XDG_CONFIG_HOME=" + home, "ALPHA_TOKEN=" + alpha.Token}},
		"sh", "-c", stacktest.Binary(t, "cairn")+" shell ws-alpha; echo cli-exit-$?; exec sh")
	cli.WaitForText(time.Minute, "/mnt/cairn/ws #") // the prompt: typing before it would echo locally
	cli.Type("echo in-the-shell")
	cli.Keys("Enter")
	cli.WaitForText(seen, "in-the-shell")
	palette(p, "shells")
	p.WaitForText(seen, "shells (1)", "ws-alpha")

	t.Log("D kills it; the CLI says terminated")
	p.Keys("D")
	p.WaitForText(seen, "(y/N)")
	p.Keys("y")
	cli.WaitForText(time.Minute, "terminated")
	p.WaitForText(seen, "No live shells")

	t.Log(":audit shows the kill")
	palette(p, "audit ws-alpha")
	screen = p.WaitForText(seen, "audit (", "SHELL_CLOSED", "terminated")
	require.Contains(t, screen, "killed_by", "the detail of the newest row, the kill, names who killed it")
}

// palette runs one command through the : palette.
func palette(p *tmuxtest.Pane, line string) {
	p.Keys(":")
	p.WaitForText(seen, ":")
	p.Type(line)
	p.Keys("Enter")
}

func fleetClient(t *testing.T, srv *stacktest.Server) *client.Client {
	t.Helper()
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	return api
}

// seedArtifacts uploads n small artifacts.
func seedArtifacts(t *testing.T, api *client.Client, wsID string, n int) {
	t.Helper()
	dir := t.TempDir()
	for i := range n {
		path := filepath.Join(dir, fmt.Sprintf("a%02d", i))
		require.NoError(t, os.WriteFile(path, []byte(strings.Repeat("x", i+1)), 0o600))
		_, err := api.Upload(t.Context(), wsID, path, client.UploadOptions{Name: fmt.Sprintf("art_%02d", i)})
		require.NoError(t, err)
	}
}
