package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/stack/stacktest"
)

// TestRealTerminalLifecycle drives a workspace's lifecycle with the real
// binary on the real stack: a workspace made with a ttl shows its expiry
// in the EXPIRES column; the maintainer's workspace.expiring warning is a
// toast with no key pressed; T touches it, and the toast says the new
// expiry.
func TestRealTerminalLifecycle(t *testing.T) {
	srv := stacktest.StartServer(t, stacktest.ServerOptions{Maintainer: true, Config: "lifecycle: {warnBeforeSecs: 7200}\n"})
	api, err := client.New(srv.URL, client.WithToken(srv.Token))
	require.NoError(t, err)
	ctx := t.Context()
	p := startTUI(t, srv)
	p.WaitForText(seen, "● live")

	t.Log("a workspace made with a ttl shows its expiry")
	ttl := int64(3600)
	ws, err := api.CreateWorkspace(ctx, cairn.WorkspaceCreate{Name: "ws-life", Lifecycle: cairn.Lifecycle{TTLSecs: &ttl}})
	require.NoError(t, err)
	screen := p.WaitForText(seen, "ws-life", "EXPIRES", "in 59m")
	require.Contains(t, lineWith(screen, "▸ ws-life"), "in 59m", "in its row")

	t.Log("the maintainer's warning is a toast, with no key pressed")
	_, err = api.Sweep(ctx, "") // a full pass warns of what expires within warnBeforeSecs
	require.NoError(t, err)
	p.WaitForText(seen, "workspace ws-life expires in 59m — T postpones it by its ttl (1h)")

	t.Log("T touches it: the toast says the new expiry")
	p.Keys("g")
	p.WaitForText(seen, "▸ ws-life")
	p.Keys("T")
	p.WaitForText(seen, "touched ws-life: it now expires")
	got, err := api.InspectWorkspace(ctx, ws.ID)
	require.NoError(t, err)
	require.True(t, got.Workspace.ExpiresAt.After(*ws.ExpiresAt), "the expiry moved")
	require.WithinDuration(t, time.Now().Add(time.Hour), *got.Workspace.ExpiresAt, time.Minute)
}
