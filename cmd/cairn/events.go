package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
)

// newEventsCommand is `cairn events [--ws WS]`: the live events stream as
// NDJSON on stdout, one frame a line (hello, changes, resync) exactly as
// the server sends them, until interrupted. A lost connection is retried
// with the client's backoff and noted on stderr; a refused token ends it
// (exit 5). -o name prints the ID of each change instead.
func newEventsCommand(c *cli) *cobra.Command {
	var ws string
	cmd := &cobra.Command{
		Use:   "events [--ws WS]",
		Short: "Follow live changes: one JSON object a line, until interrupted",
		Args:  usage(cobra.NoArgs),
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, _ []string) error {
			f := cairn.EventFilter{}
			if ws != "" {
				var err error
				if f.WorkspaceID, err = workspaceID(cmd.Context(), cl, ws); err != nil {
					return err
				}
			}
			return c.follow(cmd.Context(), cl, f, c.writeEvent)
		}),
	}
	cmd.Flags().StringVar(&ws, "ws", "", "only this workspace and its artifacts (name or ID)")
	_ = cmd.RegisterFlagCompletionFunc("ws", c.completeWorkspaces) // the flag was just defined
	return cmd
}

// follow writes the stream's frames until ctx is done (nil then) or the
// stream fails for good.
func (c *cli) follow(ctx context.Context, cl *client.Client, f cairn.EventFilter,
	write func(*json.Encoder, cairn.Event) error) error {
	stream, err := cl.Events(ctx, f)
	if err != nil {
		return err
	}
	defer stream.Close() //nolint:errcheck // nothing to report at the end
	enc := json.NewEncoder(c.stdout)
	for {
		ev, err := stream.Next(ctx)
		var lost *cairn.DisconnectedError
		switch {
		case ctx.Err() != nil:
			return nil // interrupted: the normal end
		case errors.As(err, &lost):
			c.note("events: %v", err)
			continue
		case err != nil:
			return err
		}
		if err := write(enc, ev); err != nil {
			return fmt.Errorf("write event: %w", err)
		}
	}
}

func (c *cli) writeEvent(enc *json.Encoder, ev cairn.Event) error {
	if c.output != "name" {
		return enc.Encode(ev)
	}
	if !ev.IsChange() {
		return nil
	}
	_, err := fmt.Fprintln(c.stdout, ev.ID)
	return err
}
