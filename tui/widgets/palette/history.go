package palette

import "strings"

// HistorySize is the default bound of a History.
const HistorySize = 100

// History is the palette lines run so far, oldest first, newest last. The
// root keeps one across openings and passes it to New; a run line is
// added by the palette. A line run again moves to the end rather than
// showing twice; past the bound the oldest go.
type History struct {
	lines []string
	max   int
}

// NewHistory keeps at most max lines (HistorySize when max < 1).
func NewHistory(max int) *History {
	if max < 1 {
		max = HistorySize
	}
	return &History{max: max}
}

// Add records line (spaces trimmed; empty lines are not kept).
func (h *History) Add(line string) {
	line = strings.TrimSpace(line)
	if line == "" {
		return
	}
	for i, l := range h.lines {
		if l == line {
			h.lines = append(h.lines[:i], h.lines[i+1:]...)
			break
		}
	}
	h.lines = append(h.lines, line)
	if over := len(h.lines) - h.max; over > 0 {
		h.lines = append(h.lines[:0], h.lines[over:]...)
	}
}

// Lines is a copy of the history, oldest first.
func (h *History) Lines() []string { return append([]string(nil), h.lines...) }

// Len is how many lines are kept.
func (h *History) Len() int { return len(h.lines) }

// at is the line n back from the newest (0 is the newest).
func (h *History) at(n int) string { return h.lines[len(h.lines)-1-n] }
