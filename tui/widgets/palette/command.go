package palette

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Arg is one argument of a command: its placeholder (NAME, WS/NAME),
// whether it may be left out, and whether it takes the rest of the line,
// spaces and all (a path).
type Arg struct {
	Name     string
	Optional bool
	Rest     bool
}

// Command is one palette command: its name, its arguments and what it
// does. The palette only parses; the root decides what a command does.
type Command struct {
	Name string
	Args []Arg
	Help string
}

// Usage is the command as :help shows it: "ws NAME", "files WS [PATH]".
func (c Command) Usage() string {
	parts := []string{c.Name}
	for _, a := range c.Args {
		if a.Optional {
			parts = append(parts, "["+a.Name+"]")
			continue
		}
		parts = append(parts, a.Name)
	}
	return strings.Join(parts, " ")
}

// required is how many arguments must be given.
func (c Command) required() int {
	n := 0
	for _, a := range c.Args {
		if !a.Optional {
			n++
		}
	}
	return n
}

// rest reports a last argument that takes the rest of the line.
func (c Command) rest() bool { return len(c.Args) > 0 && c.Args[len(c.Args)-1].Rest }

var commands = []Command{
	{Name: "ws", Args: []Arg{{Name: "NAME"}}, Help: "open a workspace's artifacts"},
	{Name: "art", Args: []Arg{{Name: "WS/NAME"}}, Help: "open an artifact"},
	{Name: "files", Args: []Arg{{Name: "WS"}, {Name: "PATH", Optional: true, Rest: true}}, Help: "browse a workspace's volume files"},
	{Name: "audit", Args: []Arg{{Name: "WS", Optional: true}}, Help: "the audit log, of one workspace or all"},
	{Name: "shells", Help: "the live shells, to list or kill"},
	{Name: "transfers", Help: "the transfers"},
	{Name: "ctx", Args: []Arg{{Name: "NAME"}}, Help: "switch to another server context"},
	{Name: "sweep", Args: []Arg{{Name: "WS", Optional: true}}, Help: "reconcile objects now, one workspace or all (admin)"},
	{Name: "help", Help: "keys and commands"},
	{Name: "q", Help: "quit"},
}

// Commands is the command table, in the order :help lists it.
func Commands() []Command {
	out := make([]Command, len(commands))
	copy(out, commands)
	return out
}

// Lookup finds a command by its exact name.
func Lookup(name string) (Command, bool) {
	for _, c := range commands {
		if c.Name == name {
			return c, true
		}
	}
	return Command{}, false
}

// ErrEmpty is Parse's error for a line with no command.
var ErrEmpty = errors.New("type a command — :help lists them")

// UnknownError is Parse's error for a command not in the table.
type UnknownError struct{ Name string }

func (e *UnknownError) Error() string {
	return "unknown command: " + e.Name + " — :help lists them"
}

// Parse splits a palette line (a leading ':' is allowed) into its command
// and arguments. Arguments are separated by spaces, except a last Rest
// argument, which is the rest of the line with its outer spaces trimmed.
// A missing required argument or one too many is an error naming the
// usage.
func Parse(line string) (Command, []string, error) {
	line = strings.TrimPrefix(strings.TrimSpace(line), ":")
	name, tail := cutWord(line)
	if name == "" {
		return Command{}, nil, ErrEmpty
	}
	c, ok := Lookup(name)
	if !ok {
		return Command{}, nil, &UnknownError{Name: name}
	}
	args := splitArgs(tail, len(c.Args), c.rest())
	switch {
	case len(args) < c.required():
		return c, args, fmt.Errorf(":%s needs %s — :%s", c.Name, c.Args[len(args)].Name, c.Usage())
	case len(args) > len(c.Args):
		return c, args, fmt.Errorf(":%s takes %s — :%s", c.Name, argCount(len(c.Args)), c.Usage())
	}
	return c, args, nil
}

func argCount(n int) string {
	switch n {
	case 0:
		return "no arguments"
	case 1:
		return "one argument"
	}
	return fmt.Sprintf("at most %d arguments", n)
}

// cutWord splits s at its first run of spaces: the word before, the text
// after (its leading spaces dropped).
func cutWord(s string) (word, tail string) {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}

// splitArgs splits the arguments; with rest, the n-th is the remainder.
func splitArgs(s string, n int, rest bool) []string {
	var out []string
	for s = strings.TrimSpace(s); s != ""; {
		if rest && len(out) == n-1 {
			return append(out, s)
		}
		var w string
		w, s = cutWord(s)
		out = append(out, w)
	}
	return out
}
