package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
)

// shellTerm is the TERM value the server accepts (PTYSHELL.md §3.1); the
// local one is passed on when it fits.
var shellTerm = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)

func newShellCommand(c *cli) *cobra.Command {
	var detachKey string
	cmd := &cobra.Command{
		Use:   "shell WS",
		Short: "Open an interactive shell in a workspace's volume (at /mnt/cairn/ws)",
		Long: `shell opens an interactive shell in a fresh container that mounts the
workspace's volume at /mnt/cairn/ws, over the API (the token needs scope
shell). The detach key (Ctrl-] unless --detach-key says otherwise) leaves;
leaving ends the shell, there is no reattach.

The exit status is the shell's own, 255 when the connection was lost, and 0
after detaching. A refusal before the shell starts exits like any other
command (3 not found, 4 conflict, 5 not allowed, 6 unavailable).`,
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			return c.shell(cmd, cl, args[0], detachKey)
		}),
	}
	cmd.Flags().StringVar(&detachKey, "detach-key", ptyshell.DefaultDetachKey, `the key that leaves the shell, ctrl-<key>, or "none"`)
	return cmd
}

// shell dials and runs the session on this process's terminal (§12.8). A
// session that ran ends the process with its status here, after the
// terminal was restored and the summary printed: the status is the shell's,
// not a failure of this command's.
func (c *cli) shell(cmd *cobra.Command, cl *client.Client, ws, detachKey string) error {
	if _, _, err := ptyshell.ParseDetachKey(detachKey); err != nil {
		return usagef("--detach-key: %v", err)
	}
	in, out := os.Stdin, os.Stdout
	if !term.IsTerminal(int(in.Fd())) || !term.IsTerminal(int(out.Fd())) {
		return ptyshell.ErrNotTerminal
	}
	cols, rows, err := term.GetSize(int(out.Fd()))
	if err != nil {
		return fmt.Errorf("read the terminal size: %w", err)
	}
	id, err := workspaceID(cmd.Context(), cl, ws)
	if err != nil {
		return err
	}
	t := os.Getenv("TERM")
	if !shellTerm.MatchString(t) {
		t = ""
	}
	sess, err := cl.Shell(cmd.Context(), id, ptyshell.Size{Cols: cols, Rows: rows}.Clamp(), t)
	if err != nil {
		return err
	}
	tm, err := ptyshell.NewTerminal(sess, ptyshell.TerminalOptions{Workspace: ws, DetachKey: detachKey})
	if err != nil {
		_ = sess.Close() // never used
		return usagef("--detach-key: %v", err)
	}
	tm.SetStdin(in)
	tm.SetStdout(out)
	if err := tm.Run(); errors.Is(err, ptyshell.ErrNotTerminal) {
		return err
	}
	os.Exit(tm.Result().ExitStatus())
	return nil
}
