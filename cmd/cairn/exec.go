package main

import (
	"errors"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/wsexec"
)

// exitConnectionLost is the status of an exec whose status never came, as
// ssh and `cairn shell` use it.
const exitConnectionLost = 255

func newExecCommand(c *cli) *cobra.Command {
	var noStdin bool
	cmd := &cobra.Command{
		Use:   "exec WS -- CMD [ARG...]",
		Short: "Run a command in a workspace's volume (at /mnt/cairn/ws), without a terminal",
		Long: `exec runs one command in a fresh container that mounts the workspace's
volume at /mnt/cairn/ws, over the API (the token needs scope shell), as
docker exec -i would: no TTY, the command's stdout and stderr to this
process's stdout and stderr, kept apart, and this process's stdin streamed to
the command until its end of file. The argv runs as given, with no shell in
between: write 'cairn exec WS -- sh -c "..."' for one. When stdin is a
terminal it is still streamed (end it with Ctrl-D); -n gives the command an
empty stdin instead.

The exit status is the command's own (a command killed by signal N: 128+N),
255 when the connection was lost before the command's status arrived. A
refusal before the command starts exits like any other command (2 usage,
3 not found, 4 conflict, 5 not allowed, 6 unavailable).`,
		Args:              usage(execArgs),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			var stdin io.Reader = os.Stdin
			if noStdin {
				stdin = nil
			}
			return c.exec(cmd, cl, args[0], args[1:], stdin)
		}),
	}
	cmd.Flags().BoolVarP(&noStdin, "no-stdin", "n", false, "give the command an empty stdin")
	return cmd
}

// execArgs wants the workspace, then "--", then the command.
func execArgs(cmd *cobra.Command, args []string) error {
	if cmd.ArgsLenAtDash() != 1 || len(args) < 2 {
		return errors.New("want the workspace, then --, then the command: cairn exec WS -- CMD [ARG...]")
	}
	return nil
}

// exec runs the command and ends the process with its status: the status
// is the command's, not a failure of this one.
func (c *cli) exec(cmd *cobra.Command, cl *client.Client, ws string, argv []string, stdin io.Reader) error {
	id, err := workspaceID(cmd.Context(), cl, ws)
	if err != nil {
		return err
	}
	st, err := cl.Exec(cmd.Context(), id, argv, stdin, c.stdout, c.stderr)
	if errors.Is(err, wsexec.ErrConnectionLost) {
		c.note("cairn exec: %v", err)
		os.Exit(exitConnectionLost)
	}
	if err != nil {
		return err
	}
	if st.Reason != wsexec.ReasonExited {
		c.note("cairn exec: %s", st.Message)
	}
	os.Exit(st.ExitCode)
	return nil
}
