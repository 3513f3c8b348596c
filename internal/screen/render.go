package screen

import (
	"bytes"
	"fmt"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// reset puts a terminal that showed anything before into the state of a
// fresh one: main screen, whole-screen scroll region, default pen and
// modes, cursor shown, screen cleared. The client's own scrollback is
// left alone.
const reset = "\x1b[?1049l\x1b[r\x1b[m\x1b[?1l\x1b>\x1b[?6l\x1b[?7h\x1b[4l\x1b[20l" +
	"\x1b[?9l\x1b[?1000l\x1b[?1001l\x1b[?1002l\x1b[?1003l\x1b[?1004l\x1b[?1006l\x1b[?2004l" +
	"\x1b[?25h\x1b[0 q\x1b[H\x1b[2J"

// Render returns bytes that, written to a terminal of the same size,
// reproduce the current state: up to the scrollback limit of history
// lines, then the main screen; when the alternate screen is active, it is
// entered and drawn over the main one; then the scroll region, the modes a
// full-screen program relies on, the title, the cursor's shape, position
// and visibility.
func (s *Screen) Render() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.feed.flush()
	b := bytes.NewBufferString(reset)
	s.renderHistory(b)
	if s.emu.IsAltScreen() {
		s.renderMainSnapshot(b)
		b.WriteString("\x1b[?1049h\x1b[H")
	}
	s.renderRows(b, s.active())
	s.renderState(b)
	return b.Bytes()
}

// active returns the rows of the active screen.
func (s *Screen) active() [][]uv.Cell {
	return s.capture().rows
}

func (s *Screen) renderHistory(b *bytes.Buffer) {
	sb := s.emu.Scrollback()
	w := s.emu.Width()
	for i := range sb.Len() {
		l := sb.Line(i)
		writeRow(b, l[:min(len(l), w)])
		b.WriteString("\r\n")
	}
}

// renderMainSnapshot draws the main screen as it was when the alternate
// screen was entered, cut or padded to the current size, and puts the
// cursor where it was (the alternate screen's entry saves it).
func (s *Screen) renderMainSnapshot(b *bytes.Buffer) {
	w, h := s.emu.Width(), s.emu.Height()
	rows := make([][]uv.Cell, h)
	for y := range rows {
		if y < len(s.main.rows) {
			rows[y] = s.main.rows[y][:min(len(s.main.rows[y]), w)]
		}
	}
	s.renderRows(b, rows)
	fmt.Fprintf(b, "\x1b[%d;%dH", min(s.main.cy, h-1)+1, min(s.main.cx, w-1)+1)
}

// renderRows draws rows from the cursor's line down, CR LF between them.
func (s *Screen) renderRows(b *bytes.Buffer, rows [][]uv.Cell) {
	for y, r := range rows {
		if y > 0 {
			b.WriteString("\r\n")
		}
		writeRow(b, r)
	}
}

// writeRow writes a row's cells with their SGR and hyperlinks, leaving out
// trailing blank cells of the default style.
func writeRow(b *bytes.Buffer, row []uv.Cell) {
	end := len(row)
	for end > 0 && blank(&row[end-1]) {
		end--
	}
	var pen uv.Style
	var link uv.Link
	for i := 0; i < end; i++ {
		c := &row[i]
		if c.Width == 0 && c.Content == "" && i > 0 && row[i-1].Width > 1 {
			continue // right half of a wide character
		}
		if !c.Style.Equal(&pen) {
			b.WriteString(sgr(&c.Style))
			pen = c.Style
		}
		if c.Link != link {
			b.WriteString(ansi.SetHyperlink(c.Link.URL, c.Link.Params))
			link = c.Link
		}
		if c.Content == "" {
			b.WriteByte(' ')
			continue
		}
		b.WriteString(c.Content)
	}
	if !link.IsZero() {
		b.WriteString(ansi.ResetHyperlink())
	}
	if !pen.IsZero() {
		b.WriteString("\x1b[m") // a line feed that scrolls fills with the pen's background
	}
}

// sgr is the sequence that sets style st from any pen.
func sgr(st *uv.Style) string {
	if st.IsZero() {
		return "\x1b[m"
	}
	return "\x1b[m" + st.String()
}

func blank(c *uv.Cell) bool {
	return (c.Content == " " || c.Content == "") && c.Width <= 1 && c.Style.IsZero() && c.Link.IsZero()
}

// renderState restores the scroll region, modes, title and cursor.
func (s *Screen) renderState(b *bytes.Buffer) {
	if r := s.region[s.screenIndex()]; r != [2]int{} {
		fmt.Fprintf(b, "\x1b[%d;%dr", r[0]+1, r[1])
	}
	s.renderModes(b)
	if s.title != "" {
		b.WriteString(ansi.SetWindowTitle(s.title))
	}
	if st, blink := s.emu.CursorStyle(); st != 0 || !blink {
		fmt.Fprintf(b, "\x1b[%d q", cursorShape(int(st), blink))
	}
	pos := s.emu.CursorPosition()
	if s.modes[ansi.ModeOrigin] {
		pos.Y -= s.region[s.screenIndex()][0] // CUP counts from the region's top
	}
	fmt.Fprintf(b, "\x1b[%d;%dH", pos.Y+1, pos.X+1)
	if s.emu.CursorHidden() {
		b.WriteString("\x1b[?25l")
	}
}

func cursorShape(st int, blink bool) int {
	n := 2*st + 1
	if !blink {
		n++
	}
	return n
}

// restored are the modes Render restores, in the order it sets them; the
// keypad mode (DECNKM, 66) is sent as DECKPAM (ESC =), which every
// terminal knows. Origin mode comes after the region, as it homes the
// cursor into it.
var restored = []ansi.Mode{
	ansi.ModeCursorKeys, ansi.ModeOrigin, ansi.ModeAutoWrap, ansi.ModeInsertReplace,
	ansi.ModeLineFeedNewLine, ansi.ModeMouseX10, ansi.ModeMouseNormal,
	ansi.ModeMouseHighlight, ansi.ModeMouseButtonEvent, ansi.ModeMouseAnyEvent,
	ansi.ModeFocusEvent, ansi.ModeMouseExtSgr, ansi.ModeBracketedPaste, ansi.ModeNumericKeypad,
}

func (s *Screen) renderModes(b *bytes.Buffer) {
	for _, m := range restored {
		on, seen := s.modes[m]
		if !seen || on == (m == ansi.ModeAutoWrap) {
			continue // as on a fresh terminal
		}
		b.WriteString(modeSeq(m, on))
	}
}

func modeSeq(m ansi.Mode, on bool) string {
	if m == ansi.ModeNumericKeypad {
		if on {
			return "\x1b="
		}
		return "\x1b>"
	}
	if on {
		return ansi.SetMode(m)
	}
	return ansi.ResetMode(m)
}
