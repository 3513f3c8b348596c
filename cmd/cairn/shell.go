package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/ptyshell"
)

// shellTerm is the TERM value the server accepts; the local one is passed
// on when it fits.
var shellTerm = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,64}$`)

func newShellCommand(c *cli) *cobra.Command {
	var detachKey, attach, watch string
	var record bool
	cmd := &cobra.Command{
		Use:   "shell WS | --attach ID | --watch ID",
		Short: "Open an interactive shell in a workspace's volume (at /mnt/cairn/ws)",
		Long: `shell opens an interactive shell in a fresh container that mounts the
workspace's volume at /mnt/cairn/ws, over the API (the token needs scope
shell). The detach key (Ctrl-] unless --detach-key says otherwise) leaves.

On a server that offers the v2 protocol the shell outlives the connection:
leaving keeps it running for shell.timeouts.detachedSecs, a dropped
connection is reattached by itself, and --attach ID reattaches later (the
secret is kept per shell ID, 0600, under $XDG_STATE_HOME/cairn/shells, or
read from CAIRN_SHELL_SECRET; never a flag). --watch ID shows a shell
read-only. On a v1 server leaving ends the shell. --record asks a v2 server
to record the session (asciicast v2) and store it as the artifact
shell-<id>_cast of the workspace when the shell ends.

The exit status is the shell's own, 255 when the connection was lost, and 0
after detaching. A refusal before the shell starts exits like any other
command (3 not found, 4 conflict, 5 not allowed, 6 unavailable), and so does
a reattach refused or unanswered within the detached timeout.`,
		Args: usage(func(cmd *cobra.Command, args []string) error {
			if attach != "" || watch != "" {
				return cobra.NoArgs(cmd, args)
			}
			return cobra.ExactArgs(1)(cmd, args)
		}),
		ValidArgsFunction: c.completeWorkspaces,
		RunE: c.run(func(cmd *cobra.Command, cl *client.Client, args []string) error {
			if _, _, err := ptyshell.ParseDetachKey(detachKey); err != nil {
				return usagef("--detach-key: %v", err)
			}
			var status int
			var err error
			switch {
			case attach != "" && watch != "":
				return usagef("--attach and --watch exclude each other")
			case record && (attach != "" || watch != ""):
				return usagef("--record applies to a new shell, not to --attach or --watch")
			case attach != "":
				status, err = c.attachShell(cmd.Context(), cl, attach, detachKey)
			case watch != "":
				status, err = c.watchShell(cmd.Context(), cl, watch, detachKey)
			default:
				return c.shell(cmd, cl, args[0], detachKey, record)
			}
			if err != nil {
				return err
			}
			os.Exit(status)
			return nil
		}),
	}
	cmd.Flags().StringVar(&detachKey, "detach-key", ptyshell.DefaultDetachKey, `the key that leaves the shell, ctrl-<key>, or "none"`)
	cmd.Flags().StringVar(&attach, "attach", "", "reattach to the v2 shell with this ID")
	cmd.Flags().StringVar(&watch, "watch", "", "watch the v2 shell with this ID, read-only")
	cmd.Flags().BoolVar(&record, "record", false, "record the new shell and store the recording as an artifact (v2 servers)")
	return cmd
}

// shell dials and runs the session on this process's terminal. A session
// that ran ends the process with its status here, after the terminal was
// restored and the summary printed: the status is the shell's, not a
// failure of this command's.
func (c *cli) shell(cmd *cobra.Command, cl *client.Client, ws, detachKey string, record bool) error {
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
	size := ptyshell.Size{Cols: cols, Rows: rows}.Clamp()
	if os.Getenv("CAIRN_SHELL_PROTOCOL") != "v1" {
		create := cairn.ShellCreate{Cols: size.Cols, Rows: size.Rows, Term: t, Record: record}
		status, ok, err := c.shellV2(cmd.Context(), cl, id, ws, create, detachKey)
		if err != nil {
			return err
		}
		if ok {
			os.Exit(status)
		}
	}
	if record {
		return usagef("--record needs a server that offers v2 shells; v1 shells are not recorded")
	}
	sess, err := cl.Shell(cmd.Context(), id, size, t)
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
