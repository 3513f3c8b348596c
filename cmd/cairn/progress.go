package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// bar draws one transfer's progress on a terminal's stderr: its phase and
// what, percent, a bar, bytes, rate and time left, on one line redrawn in
// place. The rate and time left are termkit.Meter's, the same as the
// TUI's; a new phase starts them over.
type bar struct {
	w     io.Writer
	width int
	name  string           // what moves, sanitised
	now   func() time.Time // stamps each sample

	mu    sync.Mutex // the callback runs on the transfer's goroutine
	phase client.Phase
	meter termkit.Meter
	drawn bool
}

// progress returns the phase callback for a transfer of name, or nil when
// stderr is not a terminal or --quiet is set: then nothing but the result
// is printed.
func (c *cli) progress(name string) (client.PhaseProgress, func()) {
	if c.quiet || !isTerminal(c.stderr) {
		return nil, func() {}
	}
	b := &bar{w: c.stderr, width: terminalWidth(c.stderr), name: termkit.Sanitize(name), now: time.Now}
	return b.update, b.end
}

// update takes one report of the client's: a phase other than the last
// one's starts the meter afresh, so the upload after the hash pass has its
// own rate and time left.
func (b *bar) update(phase client.Phase, done, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if phase != b.phase {
		b.phase, b.meter = phase, termkit.Meter{}
	}
	b.meter.Sample(done, total, b.now())
	b.line(b.render())
}

// render is the line for the meter's latest sample: the bar is left out
// when the terminal is too narrow for ten cells of it.
func (b *bar) render() string {
	done, total := b.meter.Done, b.meter.Total
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	eta := "--"
	if d, ok := b.meter.ETA(); ok {
		eta = d.String()
	}
	label := b.phase.String() + " " + b.name
	tail := fmt.Sprintf(" %3.0f%%  %s/%s  %s/s  ETA %s", pct, termkit.Size(done), termkit.Size(total),
		termkit.Size(int64(b.meter.Rate)), eta)
	room := b.width - len(label) - len(tail) - 4
	if room < 10 {
		return label + tail
	}
	filled := int(float64(room) * pct / 100)
	return label + " [" + strings.Repeat("#", filled) + strings.Repeat(".", room-filled) + "]" + tail
}

// line redraws the current line.
func (b *bar) line(s string) {
	fmt.Fprint(b.w, "\r"+cut(s, b.width-1)+"\x1b[K")
	b.drawn = true
}

// end leaves the last drawing on its own line.
func (b *bar) end() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprintln(b.w)
		b.drawn = false
	}
}
