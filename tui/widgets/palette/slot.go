package palette

import (
	"strings"
	"unicode"
)

// slot is the word of the line being completed: the command word (cmd
// "") or argument arg of cmd, the text typed of it so far and where that
// starts in the line.
type slot struct {
	cmd   string
	arg   int
	query string
	start int
}

// key is what a slot's candidates are cached under.
func (s slot) key() slotKey { return slotKey{cmd: s.cmd, arg: s.arg} }

type slotKey struct {
	cmd string
	arg int
}

// locate finds the slot at the end of line; false when there is none to
// complete: an unknown command, or more words than it takes.
func locate(line string) (slot, bool) {
	pos := len(line) - len(strings.TrimLeftFunc(line, unicode.IsSpace))
	word := line[pos:]
	i := strings.IndexFunc(word, unicode.IsSpace)
	if i < 0 {
		return slot{query: word, start: pos}, true
	}
	c, ok := Lookup(word[:i])
	if !ok {
		return slot{}, false
	}
	pos += i
	for arg := 0; ; arg++ {
		tail := strings.TrimLeftFunc(line[pos:], unicode.IsSpace)
		pos = len(line) - len(tail)
		if arg >= len(c.Args) {
			return slot{}, false
		}
		if c.Args[arg].Rest {
			return slot{cmd: c.Name, arg: arg, query: tail, start: pos}, true
		}
		j := strings.IndexFunc(tail, unicode.IsSpace)
		if j < 0 {
			return slot{cmd: c.Name, arg: arg, query: tail, start: pos}, true
		}
		pos += j
	}
}
