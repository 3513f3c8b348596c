package server

import (
	"github.com/cairn-dev/cairn/internal/screen"
	"github.com/cairn-dev/cairn/ptyshell"
)

// shellScreen makes a v2 shell's virtual terminal (internal/screen) of
// shell.replay's scrollback. Without one (nil), a v2 shell keeps
// ptyshell.TailScreen instead: the last 64 KiB of raw output, replayed as
// they are on attach — so the first prompt, printed before anyone
// attached, and output printed while detached still show.
var shellScreen = func(cols, rows, scrollback int) ptyshell.Screen { return screen.New(cols, rows, scrollback) }

// newShellScreen is service.ShellConfig's NewScreen; nil without shellScreen.
func (s *Server) newShellScreen(cols, rows int) ptyshell.Screen {
	if shellScreen == nil {
		return ptyshell.NewTailScreen(cols, rows)
	}
	return shellScreen(cols, rows, s.cfg.Shell.Replay.ScrollbackLines)
}
