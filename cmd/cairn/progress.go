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

// bar draws one transfer's progress on a terminal's stderr: what, percent,
// a bar, bytes, rate and time left, on one line redrawn in place. The rate
// and time left are termkit.Meter's, the same as the TUI's.
type bar struct {
	w     io.Writer
	width int
	label string
	now   func() time.Time // stamps each sample

	mu    sync.Mutex // the callback may run on the transport's goroutine
	meter termkit.Meter
	drawn bool
}

// progress returns the callback for a transfer labelled label, or nil when
// stderr is not a terminal or --quiet is set: then nothing but the result
// is printed. first, when not empty, is shown until bytes flow (the hash
// pass of an upload).
func (c *cli) progress(label, first string) (client.Progress, func()) {
	if c.quiet || !isTerminal(c.stderr) {
		return nil, func() {}
	}
	b := &bar{w: c.stderr, width: terminalWidth(c.stderr), label: termkit.Sanitize(label), now: time.Now}
	if first != "" {
		b.line(b.label + "  " + first)
	}
	return b.update, b.end
}

func (b *bar) update(done, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.meter.Sample(done, total, b.now())
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	eta := "--"
	if d, ok := b.meter.ETA(); ok {
		eta = d.String()
	}
	tail := fmt.Sprintf(" %3.0f%%  %s/%s  %s/s  ETA %s", pct, termkit.Size(done), termkit.Size(total),
		termkit.Size(int64(b.meter.Rate)), eta)
	room := b.width - len(b.label) - len(tail) - 4
	line := b.label + tail
	if room >= 10 {
		filled := int(float64(room) * pct / 100)
		line = b.label + " [" + strings.Repeat("#", filled) + strings.Repeat(".", room-filled) + "]" + tail
	}
	b.line(line)
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
