package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
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

// clean makes text from the server safe on a terminal: control characters
// (escape sequences included) become '?'; line breaks stay when keepLines.
func clean(s string, keepLines bool) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' && keepLines {
			return r
		}
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s)
}

// size is n bytes in IEC units: "512 B", "3.2 MiB", "12 GiB".
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	suffix := []string{"KiB", "MiB", "GiB", "TiB", "PiB"}[i]
	if v < 10 {
		return fmt.Sprintf("%.1f %s", v, suffix)
	}
	return fmt.Sprintf("%.0f %s", v, suffix)
}

// age is how long ago t was, in one unit: "45s", "12m", "5h", "3d", "2y".
func age(t, now time.Time) string {
	d := now.Sub(t)
	switch {
	case d < 2*time.Minute:
		return fmt.Sprintf("%ds", max(int(d.Seconds()), 0))
	case d < 2*time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	case d < 730*24*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
	return fmt.Sprintf("%dy", int(d.Hours()/24/365))
}

// stamp is a timestamp with its age: "2026-08-14 15:27:00 UTC (3h ago)".
func stamp(t, now time.Time) string {
	return t.UTC().Format("2006-01-02 15:04:05 MST") + " (" + age(t, now) + " ago)"
}
