package screen

import (
	"io"
	"sync"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// DefaultScrollback is the number of scrollback lines kept when New is
// given zero (shell.replay.scrollbackLines' default).
const DefaultScrollback = 1000

// Screen is the virtual terminal of one session: every byte of output goes
// through Write, and Render reproduces the current state on a fresh
// terminal. One goroutine may Write while others Render, Resize or read.
type Screen struct {
	mu   sync.Mutex
	emu  *vt.Emulator
	feed feeder
	// modes holds every mode the emulator reported set or reset, so that
	// Render can restore those that differ from a fresh terminal.
	modes map[ansi.Mode]bool
	// region is the DECSTBM region (top, bottom; 0-based, bottom
	// exclusive) of the main [0] and the alternate [1] screen, or zero
	// when it is the whole screen.
	region [2][2]int
	// main is the main screen as it was when the alternate screen was
	// entered: output goes to the alternate screen until it is left, and
	// the emulator does not expose the hidden main screen.
	main  snapshot
	title string
}

// snapshot is a copy of a screen's cells and cursor.
type snapshot struct {
	rows   [][]uv.Cell
	cx, cy int
}

// New returns the screen of a cols×rows terminal that keeps up to
// scrollback lines of history (DefaultScrollback when zero or less).
func New(cols, rows, scrollback int) *Screen {
	return newScreen(cols, rows, scrollback, true)
}

// newScreen is New; plainRuns false makes the emulator see every byte (the
// reference the feeder is tested against).
func newScreen(cols, rows, scrollback int, plainRuns bool) *Screen {
	if scrollback <= 0 {
		scrollback = DefaultScrollback
	}
	cols, rows = max(cols, 1), max(rows, 1)
	s := &Screen{emu: vt.NewEmulator(cols, rows), modes: map[ansi.Mode]bool{}}
	s.emu.SetScrollbackSize(scrollback)
	// The emulator answers queries (DSR, DA, DECRQM, OSC 10/11/12) into an
	// unbuffered pipe and blocks until someone reads it. The client's own
	// terminal answers the program; these answers would be duplicates.
	// Closed at once, the pipe fails every write instead of blocking.
	if pw, ok := s.emu.InputPipe().(*io.PipeWriter); ok {
		_ = pw.Close()
	}
	s.feed = newFeeder(s, scrollback, plainRuns)
	s.emu.SetCallbacks(vt.Callbacks{
		EnableMode:  func(m ansi.Mode) { s.modes[m] = true },
		DisableMode: func(m ansi.Mode) { s.modes[m] = false },
		Title:       func(t string) { s.title = t },
	})
	s.hook()
	return s
}

// hook registers handlers that run before the emulator's own (they return
// false, so the emulator's handler still runs) to record what the emulator
// keeps but does not expose.
func (s *Screen) hook() {
	s.emu.RegisterCsiHandler('r', func(p ansi.Params) bool {
		s.setRegion(p)
		return false
	})
	s.emu.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(p ansi.Params) bool {
		if !s.emu.IsAltScreen() && hasAltMode(p) {
			s.main = s.capture()
		}
		return false
	})
	s.emu.RegisterEscHandler('c', func() bool { // RIS
		s.region = [2][2]int{}
		s.title = ""
		return false
	})
}

func hasAltMode(p ansi.Params) bool {
	for _, q := range p {
		switch q.Param(-1) {
		case 47, 1047, 1049:
			return true
		}
	}
	return false
}

// setRegion mirrors the emulator's DECSTBM handling.
func (s *Screen) setRegion(p ansi.Params) {
	h := s.emu.Height()
	top, _, _ := p.Param(0, 1)
	bottom, _, _ := p.Param(1, h)
	top, bottom = max(top, 1), min(bottom, h)
	if bottom < 1 {
		bottom = h
	}
	if top >= bottom {
		return
	}
	r := [2]int{top - 1, bottom}
	if r == [2]int{0, h} {
		r = [2]int{}
	}
	s.region[s.screenIndex()] = r
}

func (s *Screen) screenIndex() int {
	if s.emu.IsAltScreen() {
		return 1
	}
	return 0
}

// capture copies the active screen.
func (s *Screen) capture() snapshot {
	w, h := s.emu.Width(), s.emu.Height()
	rows := make([][]uv.Cell, h)
	for y := range rows {
		rows[y] = make([]uv.Cell, w)
		for x := range rows[y] {
			if c := s.emu.CellAt(x, y); c != nil {
				rows[y][x] = *c
			}
		}
	}
	pos := s.emu.CursorPosition()
	return snapshot{rows: rows, cx: pos.X, cy: pos.Y}
}

// Write feeds output to the terminal. It never fails.
func (s *Screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feed.write(p)
	return len(p), nil
}

// Resize changes the terminal's size (the program is told separately, by
// the PTY). Lines are cut or padded, not reflowed; the scroll region is
// reset, as on xterm.
func (s *Screen) Resize(cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feed.flush()
	s.emu.Resize(max(cols, 1), max(rows, 1))
	s.region = [2][2]int{}
}

// Size returns the terminal's columns and rows.
func (s *Screen) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.emu.Width(), s.emu.Height()
}

// State is what a test or a status line may read of the terminal.
type State struct {
	Text          string // the visible screen, one line per row, trailing blanks cut
	CursorX       int
	CursorY       int
	CursorVisible bool
	AltScreen     bool
	Scrollback    int // lines of history kept
}

// State returns the current state.
func (s *Screen) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feed.flush()
	pos := s.emu.CursorPosition()
	return State{
		Text:    textOf(s.emu),
		CursorX: pos.X, CursorY: pos.Y,
		CursorVisible: !s.emu.CursorHidden(),
		AltScreen:     s.emu.IsAltScreen(),
		Scrollback:    s.emu.ScrollbackLen(),
	}
}

// ScrollbackText returns the history, oldest first, one line per row.
func (s *Screen) ScrollbackText() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feed.flush()
	sb := s.emu.Scrollback()
	out := make([]string, sb.Len())
	for i := range out {
		out[i] = lineText(sb.Line(i), s.emu.Width())
	}
	return out
}
