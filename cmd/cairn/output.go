package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// view is one command's result in the three formats: the REST payload for
// -o json, the IDs for -o name, a table for -o table.
type view struct {
	payload any
	names   []string
	table   func(w io.Writer, width int)
}

// emit writes v to stdout in the chosen format.
func (c *cli) emit(v view) error {
	switch c.output {
	case "json":
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v.payload)
	case "name":
		for _, n := range v.names {
			if _, err := fmt.Fprintln(c.stdout, n); err != nil {
				return err
			}
		}
		return nil
	}
	if v.table != nil {
		v.table(c.stdout, terminalWidth(c.stdout))
	}
	return nil
}

// table is rows under headers, columns two spaces apart. When it is wider
// than the screen, the flex column (a name) gives way, cut with "…".
type table struct {
	headers []string
	rows    [][]string
	flex    int
}

// minFlex is the narrowest the flex column becomes.
const minFlex = 8

func (t table) write(w io.Writer, width int) {
	widths := make([]int, len(t.headers))
	for i, h := range t.headers {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	total := 2 * (len(widths) - 1)
	for _, n := range widths {
		total += n
	}
	if over := total - width; over > 0 {
		widths[t.flex] = max(widths[t.flex]-over, minFlex, utf8.RuneCountInString(t.headers[t.flex]))
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, cell := range cells {
			cell = cut(cell, widths[i])
			if i == len(cells)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(cell + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell)+2))
		}
		fmt.Fprintln(w, b.String())
	}
	line(t.headers)
	for _, r := range t.rows {
		line(r)
	}
}

// cut shortens s to n runes, ending in "…" when it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:max(n-1, 0)]) + "…"
}

// fields is a vertical key: value listing.
type fields [][2]string

func (f fields) write(w io.Writer, _ int) {
	keyWidth := 0
	for _, kv := range f {
		keyWidth = max(keyWidth, len(kv[0]))
	}
	for _, kv := range f {
		lines := strings.Split(kv[1], "\n")
		fmt.Fprintf(w, "%-*s  %s\n", keyWidth+1, kv[0]+":", lines[0])
		for _, l := range lines[1:] {
			fmt.Fprintf(w, "%-*s  %s\n", keyWidth+1, "", l)
		}
	}
}
