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
// what, percent, a bar, bytes, rate and time left — and, for a transfer in
// parts, the parts done — on one line redrawn in place. The rate and time
// left are termkit.Meter's, the same as the TUI's; a new phase starts them
// over.
type bar struct {
	w     io.Writer
	width int
	name  string           // what moves, sanitised
	now   func() time.Time // stamps each sample

	mu         sync.Mutex // the callbacks run on the transfer's goroutines
	phase      client.Phase
	meter      termkit.Meter
	parts      int
	partsTotal int
	drawn      bool
	last       string // the line drawn last
}

// progress is what one transfer shows on stderr: the bar, on a terminal,
// and the client's notices about an interrupted earlier run; neither with
// --quiet.
type progress struct {
	c   *cli
	bar *bar // nil: no terminal, or --quiet
}

// progress returns the display of a transfer of name. With --quiet, or
// when stderr is not a terminal, there is no bar: then nothing but the
// notices and the result is printed.
func (c *cli) progress(name string) *progress {
	p := &progress{c: c}
	if !c.quiet && isTerminal(c.stderr) {
		p.bar = &bar{w: c.stderr, width: terminalWidth(c.stderr), name: termkit.Sanitize(name), now: time.Now}
	}
	return p
}

// upload wires the display into o.
func (p *progress) upload(o *client.UploadOptions) {
	o.Notice = p.notice
	if p.bar != nil {
		o.PhaseProgress, o.PartProgress = p.bar.update, p.bar.setParts
	}
}

// download wires the display into o.
func (p *progress) download(o *client.DownloadOptions) {
	o.Notice = p.notice
	if p.bar != nil {
		o.PhaseProgress, o.PartProgress = p.bar.update, p.bar.setParts
	}
}

// notice prints what the client decided about an earlier run, above the
// bar when there is one.
func (p *progress) notice(n client.Notice) {
	if p.c.quiet {
		return
	}
	if p.bar != nil {
		p.bar.interject(n.Text)
		return
	}
	p.c.note("%s", n.Text)
}

// end leaves the bar's last drawing on its own line.
func (p *progress) end() {
	if p.bar != nil {
		p.bar.end()
	}
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
	if b.partsTotal > 0 && b.phase != client.PhaseHashing {
		tail += fmt.Sprintf("  parts %d/%d", b.parts, b.partsTotal)
	}
	room := b.width - len(label) - len(tail) - 4
	if room < 10 {
		return label + tail
	}
	filled := int(float64(room) * pct / 100)
	return label + " [" + strings.Repeat("#", filled) + strings.Repeat(".", room-filled) + "]" + tail
}

// setParts takes a report of the parts done; the next sample shows it.
func (b *bar) setParts(done, total int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.parts, b.partsTotal = done, total
}

// interject prints a line of text above the bar, then draws the bar again.
func (b *bar) interject(text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	fmt.Fprint(b.w, "\r"+termkit.Sanitize(text)+"\x1b[K\n")
	if b.drawn {
		b.line(b.last)
	}
}

// line redraws the current line.
func (b *bar) line(s string) {
	fmt.Fprint(b.w, "\r"+cut(s, b.width-1)+"\x1b[K")
	b.drawn, b.last = true, s
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
