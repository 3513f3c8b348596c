package dialog

import (
	"fmt"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/choice"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// The answers of the resume offer.
const (
	ResumeAll  = "resume"
	DiscardAll = "discard"
)

// Resume offers to resume the uploads an earlier run left unfinished, or
// to discard them; esc leaves them for the next start. Each upload takes
// two lines: what it becomes and where, its size and age; its file and
// what the store holds of it (or why it starts over).
func Resume(th *theme.Theme, now time.Time, ups []transfer.Pending) *choice.Model {
	body := func(width, rows int) []string { return resumeBody(th, now, ups, width, rows) }
	title := "Resume interrupted uploads"
	if len(ups) == 1 {
		title = "Resume an interrupted upload"
	}
	return choice.New(th, title, body, "later",
		choice.Option{Key: "r", Word: "resume all", Value: ResumeAll},
		choice.Option{Key: "D", Word: "discard all", Value: DiscardAll})
}

func resumeBody(th *theme.Theme, now time.Time, ups []transfer.Pending, width, rows int) []string {
	intro := fmt.Sprintf("%d %s did not finish in an earlier run:", len(ups), termkit.Plural(len(ups), "upload", "uploads"))
	lines := []string{table.Pad(intro, width, false, th.Glyphs.Ellipsis), ""}
	note := []string{"", th.Dim.Render(table.Pad("esc changes nothing; asked again at the next start", width, false, th.Glyphs.Ellipsis))}
	fits := (rows - len(lines)) / 2 // uploads that fit, two lines each
	if fits < len(ups) {
		fits = (rows - len(lines) - 1) / 2 // one line says how many more
	}
	for i, p := range ups {
		if i == fits {
			lines = append(lines, th.Dim.Render(fmt.Sprintf("+%d more", len(ups)-i)))
			break
		}
		lines = append(lines, table.Pad(target(th, p, now, width), width, false, th.Glyphs.Ellipsis), source(th, p, width))
	}
	if len(lines)+len(note) <= rows {
		lines = append(lines, note...)
	}
	return lines[:min(len(lines), max(rows, 1))]
}

// target is the first line: the artifact it becomes and where, the size
// and how long ago it started ("started" goes when the line is short).
func target(th *theme.Theme, p transfer.Pending, now time.Time, width int) string {
	ws := p.Workspace
	if ws == "" {
		ws = "a deleted workspace"
	}
	what := fmt.Sprintf("%s %s into %s", th.Glyphs.Up, termkit.Sanitize(p.Name()), termkit.Sanitize(ws))
	if p.ArtifactID != "" {
		what = fmt.Sprintf("%s replace %s in %s", th.Glyphs.Up, termkit.Sanitize(p.Name()), termkit.Sanitize(ws))
	}
	when := termkit.Age(now, p.StartedAt)
	if when != "now" {
		when += " ago"
	}
	line := what + " " + th.Glyphs.Dot + " " + termkit.Size(p.Size) + " " + th.Glyphs.Dot + " "
	if ansi.StringWidth(line+"started "+when) > width {
		return line + when
	}
	return line + "started " + when
}

// source is the second line: the file, cut from the left to leave room
// for what the store holds of it.
func source(th *theme.Theme, p transfer.Pending, width int) string {
	state := fmt.Sprintf("%d %s", p.PartCount, termkit.Plural(p.PartCount, "part", "parts"))
	switch {
	case p.SourceChanged:
		state = th.Warn.Render(th.Glyphs.Missing + " changed since; starts over")
	case p.Gone:
		state = th.Warn.Render(th.Glyphs.Missing + " gone from the server; starts over")
	case p.Known:
		state = fmt.Sprintf("%d of %d parts stored", p.Parts, p.PartCount)
	}
	tail := " " + th.Glyphs.Dot + " " + state
	room := width - 2 - ansi.StringWidth(tail)
	path := p.Shown
	if room < 8 { // too narrow for both: the state matters more
		return table.Pad("  "+state, width, false, th.Glyphs.Ellipsis)
	}
	if over := ansi.StringWidth(path) - room; over > 0 {
		path = ansi.TruncateLeft(path, over+ansi.StringWidth(th.Glyphs.Ellipsis), th.Glyphs.Ellipsis)
	}
	return table.Pad("  "+path+tail, width, false, th.Glyphs.Ellipsis)
}
