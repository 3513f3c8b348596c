package keys

import (
	"errors"
	"fmt"
	"strings"
)

//go:generate go run ./gen

// The marker lines of docs/tui.md between which the generator writes the
// key table; everything outside them is prose written by hand.
const (
	BeginMarker = "<!-- keys:begin -->"
	EndMarker   = "<!-- keys:end -->"
)

// DocPath is where the key table lives, relative to the module root.
const DocPath = "docs/tui.md"

// Markdown renders the default bindings as the key table: one table per
// scope, each under its scope's name in bold (not a heading, so the
// table adds no anchors to the document around it).
func Markdown() string {
	m, _, err := New(nil)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	var b strings.Builder
	for i, s := range Scopes() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "**%s**\n\n| keys | action ID | action |\n|---|---|---|\n", s)
		for _, a := range m.InScope(s) {
			fmt.Fprintf(&b, "| `%s` | `%s` | %s |\n", strings.ReplaceAll(a.KeyList(), "|", `\|`), a.ID, a.Help)
		}
	}
	return b.String()
}

// Between returns what doc holds between its marker lines.
func Between(doc string) (string, error) {
	start, end, err := markers(doc)
	if err != nil {
		return "", err
	}
	return doc[start:end], nil
}

// Splice returns doc with what lies between its marker lines replaced by
// table; the marker lines and the rest of doc stay as they are.
func Splice(doc, table string) (string, error) {
	start, end, err := markers(doc)
	if err != nil {
		return "", err
	}
	return doc[:start] + table + doc[end:], nil
}

// markers finds the generated part of doc: start is just after the begin
// marker's line, end at the start of the end marker's line.
func markers(doc string) (start, end int, err error) {
	begin := lineIndex(doc, BeginMarker, 0)
	if begin < 0 {
		return 0, 0, errors.New("no line " + BeginMarker)
	}
	start = begin + len(BeginMarker) + 1
	end = lineIndex(doc, EndMarker, start)
	if end < 0 {
		return 0, 0, errors.New("no line " + EndMarker + " after " + BeginMarker)
	}
	if lineIndex(doc, BeginMarker, start) >= 0 || lineIndex(doc, EndMarker, end+len(EndMarker)+1) >= 0 {
		return 0, 0, errors.New("the key table's markers must appear once each")
	}
	return start, end, nil
}

// lineIndex is the offset of the first line, from the line starting at
// from, that is exactly marker followed by a newline; -1 if none is.
func lineIndex(doc, marker string, from int) int {
	for i := from; i < len(doc); {
		line, _, found := strings.Cut(doc[i:], "\n")
		if !found {
			return -1
		}
		if line == marker {
			return i
		}
		i += len(line) + 1
	}
	return -1
}
