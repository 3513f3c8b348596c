package shell_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/shell"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	o := shell.Options("ws-alpha", "ctrl+]", "auto")
	require.Equal(t, ptyshell.TerminalOptions{Workspace: "ws-alpha", DetachKey: "ctrl-]", PauseOnExit: true}, o)
	key, enabled, err := ptyshell.ParseDetachKey(o.DetachKey)
	require.NoError(t, err)
	require.True(t, enabled)
	require.Equal(t, byte(0x1d), key)
	require.False(t, shell.Options("ws", "none", "never").PauseOnExit)
	require.Equal(t, "none", shell.Options("ws", "none", "never").DetachKey)
	_, err = shell.New(nil, shell.Options("ws", "ctrl+1", "auto"))
	require.Error(t, err, "a key that sends no control byte is refused")
}
