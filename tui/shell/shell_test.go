package shell_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/shell"
)

func TestNewOptions(t *testing.T) {
	t.Parallel()
	o := shell.NewOptions("ws-alpha", "ctrl+]", "auto")
	require.Equal(t, ptyshell.TerminalOptions{Workspace: "ws-alpha", DetachKey: "ctrl-]", PauseOnExit: true}, o.TerminalOptions)
	require.Equal(t, "auto", o.Pause)
	key, enabled, err := ptyshell.ParseDetachKey(o.DetachKey)
	require.NoError(t, err)
	require.True(t, enabled)
	require.Equal(t, byte(0x1d), key)
	require.Equal(t, "none", shell.NewOptions("ws", "none", "never").DetachKey)
	require.False(t, shell.NewOptions("ws", "none", "never").PauseOnExit)
	_, err = shell.New(nil, shell.NewOptions("ws", "ctrl+1", "auto"))
	require.Error(t, err, "a key that sends no control byte is refused")
}

func TestPauses(t *testing.T) {
	t.Parallel()
	exit := func(code int, r ptyshell.Reason) ptyshell.Result {
		return ptyshell.Result{Ending: ptyshell.EndExit, Exit: ptyshell.Exit{ExitCode: code, Reason: r}}
	}
	lost := ptyshell.Result{Ending: ptyshell.EndLost}
	for _, c := range []struct {
		name string
		mode string
		r    ptyshell.Result
		want bool
	}{
		{"AutoExitZero", "auto", exit(0, ptyshell.ReasonExited), false},
		{"AutoExitThree", "auto", exit(3, ptyshell.ReasonExited), true},
		{"AutoIdle", "auto", exit(129, ptyshell.ReasonIdleTimeout), true},
		{"AutoTerminatedZero", "auto", exit(0, ptyshell.ReasonTerminated), false},
		{"AutoLost", "auto", lost, true},
		{"AutoDetach", "auto", ptyshell.Result{Ending: ptyshell.EndDetach}, false},
		{"AlwaysExitZero", "always", exit(0, ptyshell.ReasonExited), true},
		{"NeverLost", "never", lost, false},
		{"NeverRan", "always", ptyshell.Result{}, false},
	} {
		require.Equal(t, c.want, shell.Pauses(c.mode, c.r), c.name)
	}
}
