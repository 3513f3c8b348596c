package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// fsWatch is `cairn fs watch WS [PATH]`: the changes under PATH as they
// happen, one "op path" a line (-o json: the files frames as the server
// sends them), until interrupted. A lost connection resumes from the last
// frame's cursor; changes that were missed anyway are noted on stderr.
func fsWatch(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "watch WS [PATH]",
		Short: "Follow the changes under a volume path as they happen, until interrupted",
		Long: `watch prints each change under PATH (the mount root by default) as it
happens: created, written, removed, moved_from or moved_to, then the path (a
directory with a trailing /). Changes are batched for 50 ms, each path once.
When changes were missed — the watcher fell behind, the tree is past what it
follows, or a reconnect came too late to resume — a note on stderr says so:
list the directory again. -o json prints the server's files frames, NDJSON;
-o name the changed paths only, exact.`,
		Args:              usage(cobra.RangeArgs(1, 2)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			id, err := workspaceID(cmd.Context(), cl, args[0])
			if err != nil {
				return err
			}
			f := cairn.EventFilter{WorkspaceID: id, Files: pathArg(args, 1)}
			return c.follow(cmd.Context(), cl, f, c.writeFileEvent())
		}),
	}
}

// writeFileEvent prints the files frames of a watch and notes the resyncs.
func (c *cli) writeFileEvent() func(*json.Encoder, cairn.Event) error {
	name := c.nameText()
	return func(enc *json.Encoder, ev cairn.Event) error {
		// The rows' resync after a reconnect is not about files: the
		// cursor resumed them, or a files.resync says it could not.
		switch ev.Type {
		case cairn.EventFilesResync:
			c.note("cairn fs watch: changes were missed (%s); list the directory again", ev.Reason)
		case cairn.EventFilesChanged:
		default:
			return nil
		}
		if c.output == "json" {
			return enc.Encode(ev)
		}
		for _, ch := range ev.Changes {
			p := shownPath(ch.Path)
			line := ch.Op + "\t" + name(p)
			switch {
			case c.output == "name":
				line = p // exact, for a pipe
			case ch.Dir:
				line += "/"
			}
			if _, err := fmt.Fprintln(c.stdout, line); err != nil {
				return err
			}
		}
		return nil
	}
}
