package transfer

// How one transfer reads, in the tray and on the transfers screen:
// direction, name, phase, bar, percent, rate and ETA, cut to the width it
// is given.

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// Widths of the line's parts.
const (
	nameWidth  = 16
	phaseWidth = 13
	barWidth   = 16
)

// Arrow is the direction glyph: up to the store, down from it.
func Arrow(th *theme.Theme, t *Transfer) string {
	if t.Up() {
		return th.Glyphs.Up
	}
	return th.Glyphs.Down
}

// PhaseWord is the phase, with the spinner while waiting on a step that
// reports no bytes (hashing, registering).
func PhaseWord(th *theme.Theme, t *Transfer, frame int) string {
	w := t.Phase.String()
	if t.Cancelling && !t.Phase.Finished() {
		w = "cancelling"
	}
	switch t.Phase {
	case PhaseHashing, PhaseRegistering:
		return th.Glyphs.Frame(frame) + " " + w
	case PhaseDone:
		return th.Glyphs.OK + " " + w
	case PhaseFailed:
		return strings.TrimSuffix(th.Glyphs.Error, " error:") + " " + w
	}
	return w
}

// Rate renders bytes per second: 16.0 MiB/s.
func Rate(bps float64) string { return termkit.Size(int64(bps)) + "/s" }

// Short renders a duration as 2s, 1m05s, 1h02m.
func Short(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// Bar is the progress bar and percent of a transfer ("" when it has no
// bytes to show yet): bubbles' progress drawn with ViewAs, a static render
// of the last sample, so nothing animates between them. The
// percent is rounded down: 100 % only when every byte moved.
func Bar(th *theme.Theme, t *Transfer, width int) string {
	switch {
	case t.Phase == PhaseQueued, t.Phase == PhaseCancelled, t.Phase == PhaseFailed,
		t.Phase == PhaseHashing && t.Sampled.IsZero():
		return ""
	}
	f := t.Fraction() // 0–1
	return th.Bar(width).ViewAs(f) + fmt.Sprintf(" %3d%%", int(f*100))
}

// Parts is a transfer cut in parts' count while it runs: "12/32 parts";
// "" for a transfer in one piece or one that no longer runs.
func Parts(t *Transfer) string {
	if t.PartsTotal == 0 || !t.Phase.Running() || t.Phase == PhaseHashing {
		return ""
	}
	return fmt.Sprintf("%d/%d parts", t.Parts, t.PartsTotal)
}

// Tail is what follows the bar: rate and ETA while bytes move, the size
// and duration when done, the sentence of a failure.
func Tail(th *theme.Theme, t *Transfer, now time.Time) string {
	switch t.Phase {
	case PhaseQueued:
		if t.Total > 0 {
			return termkit.Size(t.Total)
		}
		return ""
	case PhaseHashing:
		if t.Sampled.IsZero() {
			return termkit.Size(t.Total)
		}
		// The bytes read so far count up: a big file's hash pass is long.
		return termkit.Size(t.Done) + " of " + termkit.Size(t.Total) + "  " + moving(th, t)
	case PhaseDone:
		return termkit.Size(t.Total) + " in " + Short(t.Duration(now))
	case PhaseFailed:
		return th.Bad.Render(t.Err)
	case PhaseCancelled:
		return th.Dim.Render(termkit.Size(t.Done) + " of " + termkit.Size(t.Total) + " moved")
	case PhaseRegistering:
		return ""
	}
	return moving(th, t)
}

// moving is the rate and ETA of a phase that moves bytes.
func moving(th *theme.Theme, t *Transfer) string {
	rate := th.Glyphs.Dash
	if t.Rate > 0 {
		rate = Rate(t.Rate)
	}
	eta := "ETA " + th.Glyphs.Dash
	if d, ok := t.ETA(); ok {
		eta = "ETA " + Short(d)
	}
	return fmt.Sprintf("%-11s %s", rate, eta)
}

// Line renders the transfer's line at width; narrow widths drop the tail,
// then the parts, then the bar.
func Line(th *theme.Theme, t *Transfer, now time.Time, frame, width int) string {
	name := table.Pad(t.Name, nameWidth, false, th.Glyphs.Ellipsis)
	head := Arrow(th, t) + " " + name + " " + table.Pad(PhaseWord(th, t, frame), phaseWidth, false, th.Glyphs.Ellipsis)
	parts := []string{head}
	if bar := Bar(th, t, barWidth); bar != "" {
		parts = append(parts, bar)
	}
	if n := Parts(t); n != "" {
		parts = append(parts, n)
	}
	if tail := Tail(th, t, now); tail != "" {
		parts = append(parts, tail)
	}
	for len(parts) > 1 && ansi.StringWidth(strings.Join(parts, "  ")) > width {
		parts = parts[:len(parts)-1]
	}
	return table.Pad(strings.Join(parts, "  "), width, false, th.Glyphs.Ellipsis)
}

// Summary is the one tray line below 24 rows: arrows, the count and the
// percent of the bytes of every unfinished
func Summary(th *theme.Theme, ts []*Transfer, width int) string {
	var up, down bool
	var done, total int64
	n := 0
	for _, t := range ts {
		if t.Up() {
			up = true
		} else {
			down = true
		}
		if !t.Phase.Finished() {
			n++
			done, total = done+t.Done, total+t.Total
		}
	}
	arrows := ""
	if up {
		arrows += th.Glyphs.Up
	}
	if down {
		arrows += th.Glyphs.Down
	}
	text := fmt.Sprintf("%s %d %s", arrows, n, plural(n))
	if n == 0 {
		text = fmt.Sprintf("%s %d %s finished", arrows, len(ts), plural(len(ts)))
	} else if total > 0 {
		text += fmt.Sprintf(" %d%%", done*100/total)
	}
	text += " " + th.Glyphs.Dot + " " + th.Key.Render("t")
	return table.Pad(text, width, false, th.Glyphs.Ellipsis)
}

func plural(n int) string {
	if n == 1 {
		return "transfer"
	}
	return "transfers"
}
