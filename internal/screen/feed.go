package screen

import (
	"bytes"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// The emulator copies every cell of the screen on each line that scrolls
// (about 20 µs a line at 80×24, ~1 MB/s), far below what a PTY delivers.
// The feeder keeps it off that path without changing what it ends on.
//
// While the main screen scrolls as a whole and output holds only "plain"
// tokens — printable text, CR, LF, TAB, BS, BEL, SGR and EL — a line that
// is followed by more than scrollback+rows further lines can no longer be
// seen: it has left the scrollback. Such output is held back (pend); once
// more than keep lines follow a line start, everything before it is
// replaced by what of it outlives the lines: the SGR sequences since the
// last reset (the pen) and one CR LF. Anything else (a cursor move, an
// OSC, the alternate screen, a scroll region) ends the plain run: what is
// held is handed over and the emulator sees every byte until the parser
// is back in its ground state with the main screen whole again.
//
// Bounds: pend holds at most maxPend bytes (past that, it is handed to the
// emulator whole) and the lines a drop keeps.
const (
	maxPend  = 1 << 20
	maxChunk = 64 << 10 // bytes scanned before the bounds are checked
	maxCSI   = 64       // parameter bytes of a plain CSI
)

type scanState uint8

const (
	stGround scanState = iota
	stEsc
	stCSI
	stUTF8
)

type feeder struct {
	s       *Screen
	scroll  int
	plain   bool // in a plain run: bytes go to pend
	pend    []byte
	bnd     []int // offsets in pend just after each CR LF
	tok     int   // start of the token being scanned, in pend
	st      scanState
	need    int  // UTF-8 continuation bytes still to come
	params  int  // CSI parameter bytes so far
	prevCR  bool // the last byte was CR
	mirror  *ansi.Parser
	noPlain bool // never hold back: every byte reaches the emulator
}

func newFeeder(s *Screen, scroll int, plainRuns bool) feeder {
	m := ansi.NewParser()
	m.SetDataSize(0)
	return feeder{s: s, scroll: scroll, plain: plainRuns, noPlain: !plainRuns, mirror: m}
}

// keep is how many line starts a drop must leave after it.
func (f *feeder) keep() int { return f.scroll + f.s.emu.Height() + 2 }

func (f *feeder) write(p []byte) {
	for len(p) > 0 {
		n := min(len(p), maxChunk)
		f.writeChunk(p[:n])
		p = p[n:]
	}
}

func (f *feeder) writeChunk(p []byte) {
	for len(p) > 0 {
		if f.plain {
			p = p[f.scanPlain(p):]
		} else {
			p = p[f.scanOther(p):]
		}
	}
	f.bound()
}

// bound drops what it can and hands pend over when it is still too big.
func (f *feeder) bound() {
	if len(f.bnd) >= 2*f.keep() {
		f.drop()
	}
	if len(f.pend) > maxPend {
		f.handOver()
	}
}

// scanPlain appends plain bytes to pend and returns how many of p it took;
// fewer than len(p) when it met a byte that ends the plain run.
func (f *feeder) scanPlain(p []byte) int {
	base := len(f.pend)
	for i := 0; i < len(p); {
		if f.st == stGround {
			if j := printable(p, i); j > i {
				f.prevCR = false
				i = j
				continue
			}
		}
		if !f.step(p[i], base+i) {
			f.pend = append(f.pend, p[:i]...)
			f.leavePlain()
			return i
		}
		i++
	}
	f.pend = append(f.pend, p...)
	return len(p)
}

// printable returns the end of the run of printable ASCII at p[i:].
func printable(p []byte, i int) int {
	for i < len(p) && p[i]-0x20 < 0x5f {
		i++
	}
	return i
}

// step advances the scanner over b, at offset at in pend, and reports
// whether b continues the plain run.
func (f *feeder) step(b byte, at int) bool {
	cr := f.prevCR
	f.prevCR = b == '\r'
	switch f.st {
	case stUTF8:
		if b < 0x80 || b > 0xBF {
			return false
		}
		f.need--
		if f.need == 0 {
			f.st = stGround
		}
		return true
	case stEsc:
		f.st, f.params = stCSI, 0
		return b == '['
	case stCSI:
		return f.stepCSI(b)
	}
	return f.stepGround(b, at, cr)
}

func (f *feeder) stepGround(b byte, at int, cr bool) bool {
	f.tok = at
	switch {
	case b >= 0x20 && b < 0x7f, b == '\r', b == '\t', b == '\b', b == 0x07:
		return true
	case b == '\n':
		if cr {
			f.bnd = append(f.bnd, at+1)
		}
		return true
	case b == 0x1b:
		f.st = stEsc
		return true
	case b >= 0xC2 && b <= 0xF4:
		f.st, f.need = stUTF8, utf8Len(b)-1
		return true
	}
	return false
}

func utf8Len(b byte) int {
	switch {
	case b >= 0xF0:
		return 4
	case b >= 0xE0:
		return 3
	}
	return 2
}

func (f *feeder) stepCSI(b byte) bool {
	switch {
	case b >= '0' && b <= '9', b == ';', b == ':':
		f.params++
		return f.params <= maxCSI
	case b == 'm', b == 'K':
		f.st = stGround
		return true
	}
	return false
}

// leavePlain hands pend's complete tokens to the emulator and the token
// in progress to both the emulator and the mirror parser, which from now
// on tells when the emulator's parser is back in its ground state.
func (f *feeder) leavePlain() {
	f.flush()
	f.mirror.Reset()
	for _, b := range f.pend {
		f.mirror.Advance(b)
	}
	f.emuWrite(f.pend)
	f.resetPend()
	f.plain = false
}

func (f *feeder) resetPend() {
	f.pend, f.bnd, f.tok = f.pend[:0], f.bnd[:0], 0
	f.st, f.prevCR = stGround, false
}

// scanOther gives the emulator bytes up to the first point where a plain
// run may start again, and returns how many it gave.
func (f *feeder) scanOther(p []byte) int {
	from := 0
	for i, b := range p {
		act := f.mirror.Advance(b)
		if act == parser.PrintAction || f.mirror.State() != parser.GroundState {
			continue
		}
		f.emuWrite(p[from : i+1])
		from = i + 1
		if f.wholeMain() {
			f.plain = true
			return i + 1
		}
	}
	f.emuWrite(p[from:])
	f.plain = f.mirror.State() == parser.GroundState && f.wholeMain()
	return len(p)
}

// wholeMain reports whether the main screen is active and scrolls whole.
func (f *feeder) wholeMain() bool {
	s := f.s
	return !f.noPlain && !s.emu.IsAltScreen() && s.region[0] == [2]int{} && !s.modes[ansi.ModeLeftRightMargin]
}

func (f *feeder) emuWrite(p []byte) {
	if len(p) > 0 {
		_, _ = f.s.emu.Write(p)
	}
}

// drop replaces everything before the line start that has keep line
// starts after it with its pen and one CR LF.
func (f *feeder) drop() {
	i := len(f.bnd) - 1 - f.keep()
	if i < 0 {
		return
	}
	cut := f.bnd[i]
	f.emuWrite(penOf(f.pend[:cut]))
	f.emuWrite([]byte("\r\n"))
	n := copy(f.pend, f.pend[cut:])
	f.pend = f.pend[:n]
	m := copy(f.bnd, f.bnd[i+1:])
	f.bnd = f.bnd[:m]
	for j := range f.bnd {
		f.bnd[j] -= cut
	}
	f.tok -= cut
}

// flush hands the emulator every complete token held, dropping first what
// can be dropped; a token in progress stays.
func (f *feeder) flush() {
	if !f.plain {
		return
	}
	f.drop()
	f.handOver()
}

// handOver gives the emulator pend's complete tokens.
func (f *feeder) handOver() {
	end := len(f.pend)
	if f.st != stGround {
		end = f.tok
	}
	f.emuWrite(f.pend[:end])
	n := copy(f.pend, f.pend[end:])
	f.pend, f.bnd, f.tok = f.pend[:n], f.bnd[:0], 0
}

// penOf returns the SGR sequences of plain bytes b from the last one that
// starts with a reset: together they set the pen b leaves.
func penOf(b []byte) []byte {
	var out []byte
	for {
		i := bytes.IndexByte(b, 0x1b)
		if i < 0 || i+2 >= len(b) {
			return out
		}
		end := i + 2
		for end < len(b) && (b[end] < 0x40 || b[end] > 0x7e) {
			end++
		}
		if end == len(b) {
			return out
		}
		if b[end] == 'm' {
			if resets(b[i+2 : end]) {
				out = out[:0]
			}
			out = append(out, b[i:end+1]...)
		}
		b = b[end+1:]
	}
}

// resets reports whether SGR parameters begin with a reset (0 or empty).
func resets(params []byte) bool {
	for _, c := range params {
		switch c {
		case ';':
			return true
		case '0':
		default:
			return false
		}
	}
	return true
}
