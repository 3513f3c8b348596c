package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
)

// errNothingMatched is grep's answer when no line matched: exit 1, as
// grep(1) gives it, and no message, since nothing failed.
var errNothingMatched = errors.New("nothing matched")

// walkBounds is the help text on what stops a search or a tree.
const walkBounds = `The server walks depth first, each directory's names in byte order, never
into a symlink, and stops at the first of its bounds: --limit, the entries
it looks at (100 000), the content it reads (256 MiB) and its time (10 s).
What it found then is printed, and a note on stderr names the bound.`

func fsGrep(c *cli) *cobra.Command {
	var glob string
	var limit int
	cmd := &cobra.Command{
		Use:   "grep WS PATTERN [PATH] [--glob GLOB] [--limit N]",
		Short: "Print the lines of the volume's text files that match an RE2 expression, as grep -rn",
		Long: `grep searches the regular files under PATH (default the mount root) for
lines matching PATTERN, an RE2 expression (linear time, whatever it is), and
prints each as 'path:line:text', the path relative to ` + cairn.MountPath + `.
--glob keeps the files whose base name matches it (*, ?, [...]). A file with
a NUL byte in its first 8 KiB is skipped as binary, and a line's text is cut
at 512 bytes. Control characters of a path or a line show as visible escapes
('^['). -o json prints the search, -o name each matching file once.

It exits 0 when a line matched and 1 when none did, as grep does; a refusal
exits as any command does.

` + walkBounds + `

` + volumePaths,
		Args:              usage(cobra.RangeArgs(2, 3)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if args[1] == "" {
				return usagef("PATTERN must not be empty")
			}
			s, err := c.search(cmd.Context(), cl, args[0],
				cairn.FileSearchParams{Path: pathArg(args, 2), Glob: glob, Content: args[1], Limit: limit})
			if err != nil {
				return err
			}
			if err := c.emitWalk(searchView(s, c.nameText()), walkEnd{s.Stopped, "matches", len(s.Matches), limit, s.Scanned}); err != nil {
				return err
			}
			if len(s.Matches) == 0 {
				return errNothingMatched
			}
			return nil
		}),
	}
	cmd.Flags().StringVar(&glob, "glob", "", "search only the files whose base name matches this glob")
	limitFlag(cmd, &limit, cairn.DefaultSearchLimit, "matching lines")
	return cmd
}

func fsFind(c *cli) *cobra.Command {
	var glob string
	var limit int
	cmd := &cobra.Command{
		Use:   "find WS [PATH] [--name GLOB] [--limit N]",
		Short: "Print the paths under PATH whose base name matches a glob, as find -name",
		Long: `find prints the paths under PATH (default the mount root) whose base name
matches --name (*, ?, [...]; default *, every path), one a line, relative to
` + cairn.MountPath + `. It exits 0 whether or not anything matched, as find does.
-o json prints the search, -o name the paths exactly as they are into a pipe.

` + walkBounds + `

` + volumePaths,
		Args:              usage(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			s, err := c.search(cmd.Context(), cl, args[0], cairn.FileSearchParams{Path: pathArg(args, 1), Glob: glob, Limit: limit})
			if err != nil {
				return err
			}
			return c.emitWalk(searchView(s, c.nameText()), walkEnd{s.Stopped, "paths", len(s.Matches), limit, s.Scanned})
		}),
	}
	cmd.Flags().StringVar(&glob, "name", "*", "the glob a base name must match")
	limitFlag(cmd, &limit, cairn.DefaultSearchLimit, "paths")
	return cmd
}

// search runs one search of the workspace ws.
func (c *cli) search(ctx context.Context, cl *client.Client, ws string, p cairn.FileSearchParams) (*cairn.FileSearch, error) {
	if err := checkBound("limit", p.Limit, cairn.MaxSearchLimit); err != nil {
		return nil, err
	}
	id, err := workspaceID(ctx, cl, ws)
	if err != nil {
		return nil, err
	}
	s, err := cl.SearchFiles(ctx, id, p)
	if err != nil {
		return nil, err
	}
	if s.Matches == nil {
		s.Matches = []cairn.FileMatch{}
	}
	return s, nil
}

// searchView prints a search as grep -rn ('path:line:text') or, for a
// search of names alone, a path a line; -o name gives each path once.
func searchView(s *cairn.FileSearch, name func(string) string) view {
	v := view{payload: s}
	for i, m := range s.Matches {
		// A file's lines come together: depth first, each file read whole.
		if i == 0 || m.Path != s.Matches[i-1].Path {
			v.names = append(v.names, name(shownPath(m.Path)))
		}
	}
	v.table = func(w io.Writer, _ int) {
		for _, m := range s.Matches {
			line := termkit.Sanitize(shownPath(m.Path))
			if m.Line > 0 {
				line += fmt.Sprintf(":%d:%s", m.Line, termkit.Sanitize(m.Text))
			}
			fmt.Fprintln(w, line)
		}
	}
	return v
}

func fsTree(c *cli) *cobra.Command {
	var depth, limit int
	cmd := &cobra.Command{
		Use:   "tree WS [PATH] [--depth N] [--limit N]",
		Short: "List the workspace volume under PATH recursively, as an indented tree",
		Long: `tree lists what lies under PATH (default the mount root), --depth levels
down (1: PATH's own entries), a name a line indented two spaces a level, a
directory's with a trailing '/', a symlink's with its target. Control
characters of a name show as visible escapes ('^['). -o json prints the tree
with each entry's whole path; -o name the paths alone, relative to
` + cairn.MountPath + `, exactly as they are into a pipe.

The server stops at the first of --limit, the entries it looks at (100 000),
4 MiB of answer and its time (10 s); what it found then is printed, and a
note on stderr names the bound. It never descends into a symlink.

` + volumePaths,
		Args:              usage(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if err := errors.Join(checkBound("depth", depth, cairn.MaxTreeDepth),
				checkBound("limit", limit, cairn.MaxTreeLimit)); err != nil {
				return err
			}
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			t, err := cl.FileTree(cmd.Context(), id, cairn.FileTreeParams{Path: pathArg(args, 1), Depth: depth, Limit: limit})
			if err != nil {
				return err
			}
			if t.Entries == nil {
				t.Entries = []cairn.FileTreeEntry{}
			}
			return c.emitWalk(treeView(t, c.nameText()), walkEnd{t.Stopped, "entries", len(t.Entries), limit, t.Scanned})
		}),
	}
	cmd.Flags().IntVar(&depth, "depth", cairn.DefaultTreeDepth, fmt.Sprintf("levels to descend, 1 to %d", cairn.MaxTreeDepth))
	limitFlag(cmd, &limit, cairn.DefaultTreeLimit, "entries")
	return cmd
}

func treeView(t *cairn.FileTree, name func(string) string) view {
	v := view{payload: t}
	for _, e := range t.Entries {
		v.names = append(v.names, name(shownPath(e.Path)))
	}
	v.table = func(w io.Writer, _ int) {
		for _, e := range t.Entries {
			label := shortName(e.FileEntry)
			if e.LinkTarget != nil {
				label = longName(e.FileEntry)
			}
			fmt.Fprintln(w, strings.Repeat("  ", treeLevel(t.Path, e.Path))+label)
		}
	}
	return v
}

// treeLevel is how far below root's own entries p lies: 0 for those, and
// for root itself (the tree of a file is that file).
func treeLevel(root, p string) int {
	rel, ok := strings.CutPrefix(p, root+"/")
	if !ok {
		return 0
	}
	return strings.Count(rel, "/")
}

// shownPath is a volume path as grep, find and tree print it: relative to
// the mount root, as ls prints names, and as every fs command takes it.
func shownPath(p string) string {
	if p == cairn.MountPath {
		return "."
	}
	if rel, ok := strings.CutPrefix(p, cairn.MountPath+"/"); ok {
		return rel
	}
	return p
}

// pathArg is the optional PATH at args[i], the mount root when absent.
func pathArg(args []string, i int) string {
	if len(args) > i {
		return volumePath(args[i])
	}
	return cairn.MountPath
}

func limitFlag(cmd *cobra.Command, limit *int, def int, what string) {
	cmd.Flags().IntVar(limit, "limit", def, "the most "+what+" to print")
}

// checkBound refuses a count flag outside 1 … most, as the server would.
func checkBound(flag string, v, most int) error {
	if v < 1 || v > most {
		return usagef("--%s %d: expected 1 to %d", flag, v, most)
	}
	return nil
}

// walkEnd is how a search or a tree ended: the bound that stopped it, if
// any, what it printed and what it looked at.
type walkEnd struct {
	stopped string
	noun    string // what it prints: matches, paths, entries
	shown   int
	limit   int
	scanned int64
}

// emitWalk writes v, then says on stderr which bound cut it short.
func (c *cli) emitWalk(v view, end walkEnd) error {
	if err := c.emit(v); err != nil {
		return err
	}
	if end.stopped != "" {
		c.note("%s", end.note())
	}
	return nil
}

// note names the bound that stopped the walk, and what to do about it.
func (e walkEnd) note() string {
	looked := termkit.Count(e.scanned) + " " + termkit.Plural(e.scanned, "entry", "entries") + " looked at"
	switch e.stopped {
	case "results":
		if e.shown < e.limit {
			return "stopped at the size bound of one answer (" + looked + "); more " + e.noun + " remain: narrow PATH or --depth"
		}
		return fmt.Sprintf("stopped at --limit %d (%s); more %s remain", e.limit, looked, e.noun)
	case "entries":
		return "stopped at the server's bound of entries looked at (" + looked + "); narrow PATH"
	case "bytes":
		return "stopped at the server's bound of content read (" + looked + "); narrow PATH"
	case "time":
		return "stopped at the server's time bound (" + looked + "); narrow PATH"
	}
	return "stopped early, at '" + termkit.Sanitize(e.stopped) + "' (" + looked + ")"
}
