package tui

import (
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/tui/widgets/help"
)

// TestRemoteRefusesTheOperatorsDisk: in a remote workbench (over SSH) an
// upload, a replace or a download opens the modal that names what can run
// instead — no dialog reads the server's disk, no transfer is queued — and
// ctrl+z says why it cannot suspend; the same keys work locally.
func TestRemoteRefusesTheOperatorsDisk(t *testing.T) {
	t.Parallel()
	h, _ := markFleet(t, 1)
	h.m.c.Remote = true
	footer := h.view()
	for _, hint := range []string{"u upload", "U replace", "d download"} {
		require.NotContains(t, footer, hint, "not offered over SSH")
	}
	for _, key := range []string{"u", "U", "d"} {
		h.key(key)
		require.IsType(t, &help.Model{}, h.m.modal, "key %s", key)
		view := h.view()
		require.Contains(t, view, "No local disk over SSH")
		require.Contains(t, view, "saves a volume file as an artifact")
		require.Contains(t, view, "cairn art upload WS FILE")
		h.key("esc")
		require.Nil(t, h.m.modal)
	}
	require.Empty(t, h.m.xfer.All(), "nothing was queued")

	h.send(tea.SuspendMsg{})
	h.key("!")
	require.Contains(t, h.view(), "suspend is not available over SSH")

	local, _ := markFleet(t, 1)
	require.Contains(t, local.view(), "u upload", "offered locally")
	local.key("u")
	require.NotNil(t, local.m.modal)
	require.NotContains(t, local.view(), "No local disk over SSH", "locally u opens the upload dialog")
}
