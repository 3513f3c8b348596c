package dialog

import (
	"fmt"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/choice"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// The answers of an edit's conflict.
const (
	ConflictOverwrite   = "overwrite"
	ConflictKeepEditing = "edit"
	ConflictDiscard     = "discard"
)

// Version is one side of an edit's conflict: what was read of it, or why
// nothing could be.
type Version struct {
	Data []byte
	Size int64
	Err  string
}

// maxConflictLines is the most lines of each version the conflict shows:
// enough to recognise it, not to review it.
const maxConflictLines = 8

// conflictChrome is the body's lines around the two versions' lines: the
// sentence, a blank line, each version's title and the blank line
// between them.
const conflictChrome = 5

// EditConflict asks what becomes of an edit of the volume file name whose
// write was refused because the file changed since it was read: theirs
// is the file in the volume now, yours the edit. It has no "not now": the
// edit waits in a private copy until one of the three is chosen.
func EditConflict(th *theme.Theme, name string, theirs, yours Version) *choice.Model {
	body := func(width, rows int) []string { return conflictBody(th, name, theirs, yours, width, rows) }
	return choice.New(th, "Changed meanwhile: "+name, body, "",
		choice.Option{Key: "o", Word: "overwrite theirs", Value: ConflictOverwrite},
		choice.Option{Key: "e", Word: "keep editing", Value: ConflictKeepEditing},
		choice.Option{Key: "d", Word: "discard yours", Value: ConflictDiscard})
}

func conflictBody(th *theme.Theme, name string, theirs, yours Version, width, rows int) []string {
	pad := func(s string) string { return table.Pad(s, width, false, th.Glyphs.Ellipsis) }
	each := max(1, min(maxConflictLines, (rows-conflictChrome)/2))
	lines := []string{pad(name + " changed in the volume since you opened it."), ""}
	lines = append(lines, th.Bold.Render(pad("Theirs, in the volume now"+sizeNote(theirs))))
	lines = append(lines, firstLines(th, theirs, each, pad)...)
	lines = append(lines, "", th.Bold.Render(pad("Yours"+sizeNote(yours))))
	lines = append(lines, firstLines(th, yours, each, pad)...)
	return lines[:min(len(lines), max(rows, 1))]
}

func sizeNote(v Version) string {
	if v.Err != "" {
		return ""
	}
	return " (" + termkit.Size(v.Size) + ")"
}

// firstLines is at most n lines of a version, sanitised and indented; the
// last says how many more there are when they do not all fit.
func firstLines(th *theme.Theme, v Version, n int, pad func(string) string) []string {
	if v.Err != "" {
		return []string{th.Dim.Render(pad("  " + v.Err))}
	}
	all := termkit.SanitizeLines(string(v.Data), nil)
	shown := all[:min(len(all), n)]
	out := make([]string, 0, len(shown))
	for _, l := range shown {
		out = append(out, pad("  "+l))
	}
	if rest := len(all) - len(shown); rest > 0 {
		out[len(out)-1] = th.Dim.Render(pad(fmt.Sprintf("  %s %d more %s", th.Glyphs.Ellipsis, rest+1, termkit.Plural(rest+1, "line", "lines"))))
	}
	return out
}
