package server

import "github.com/cairn-dev/cairn/ptyshell"

// shellScreen makes a v2 shell's virtual terminal of shell.replay's
// scrollback. Until a Screen implementation is wired in (ptyshell/screen),
// it makes none: an attach or a watch then starts with live output only,
// and output produced while nobody was attached is not replayed.
var shellScreen func(cols, rows, scrollback int) ptyshell.Screen

// newShellScreen is service.ShellConfig's NewScreen; nil without shellScreen.
func (s *Server) newShellScreen(cols, rows int) ptyshell.Screen {
	if shellScreen == nil {
		return nil
	}
	return shellScreen(cols, rows, s.cfg.Shell.Replay.ScrollbackLines)
}
