package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/wsexec"
)

// exitConnectionLost is the status of an exec whose status never came, as
// ssh and `cairn shell` use it.
const exitConnectionLost = 255

func newExecCommand(c *cli) *cobra.Command {
	var (
		noStdin bool
		how     execFlags
	)
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

--dir runs it in a directory of the volume (relative paths are under
/mnt/cairn/ws), --env adds a variable (repeat it; names not CAIRN_*), and
--timeout ends it after that long (reason timeout; whole seconds, at most the
server's shell.timeouts.maxLifetimeSecs). While it runs, SIGINT (Ctrl-C),
SIGTERM, SIGHUP and SIGQUIT (Ctrl-\) sent to cairn are passed on to the
command, which decides what they mean, as docker run's signal proxy does.

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
			o, err := how.options()
			if err != nil {
				return err
			}
			return c.exec(cmd, cl, args[0], args[1:], o, stdin)
		}),
	}
	cmd.Flags().BoolVarP(&noStdin, "no-stdin", "n", false, "give the command an empty stdin")
	cmd.Flags().StringVar(&how.dir, "dir", "", "the working directory, in the volume (default /mnt/cairn/ws)")
	cmd.Flags().StringArrayVarP(&how.env, "env", "e", nil, "add NAME=value to the command's environment (repeatable)")
	cmd.Flags().DurationVar(&how.timeout, "timeout", 0, "end the command after this long (e.g. 90s, 10m)")
	return cmd
}

// execFlags are exec's --dir, --env and --timeout.
type execFlags struct {
	dir     string
	env     []string
	timeout time.Duration
}

// options checks the flags and renders them as the exec's options.
func (f execFlags) options() (wsexec.Options, error) {
	o := wsexec.Options{TimeoutS: int((f.timeout + time.Second - 1) / time.Second)}
	if f.timeout < 0 {
		return o, &usageError{errors.New("--timeout must not be negative")}
	}
	if f.dir != "" {
		o.Dir = volumePath(f.dir)
	}
	for _, kv := range f.env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return o, &usageError{fmt.Errorf("--env %q: want NAME=value", kv)}
		}
		if o.Env == nil {
			o.Env = map[string]string{}
		}
		o.Env[name] = value
	}
	if err := o.Check(); err != nil {
		return o, &usageError{err}
	}
	return o, nil
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
func (c *cli) exec(cmd *cobra.Command, cl *client.Client, ws string, argv []string, o wsexec.Options, stdin io.Reader) error {
	id, err := workspaceID(cmd.Context(), cl, ws)
	if err != nil {
		return err
	}
	signals, stop := forwardSignals()
	defer stop()
	// The signals that would end this process go to the command instead:
	// the run outlives the context they cancel.
	run := context.WithoutCancel(cmd.Context())
	st, err := cl.ExecWith(run, id, argv, client.ExecOptions{Options: o, Signals: signals}, stdin, c.stdout, c.stderr)
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

// forwardSignals catches the signals a user sends to end a command and
// names them for the exec, until stop.
func forwardSignals() (<-chan string, func()) {
	caught := make(chan os.Signal, 4)
	names := make(chan string, 4)
	done := make(chan struct{})
	signal.Notify(caught, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	go func() {
		for {
			select {
			case s := <-caught:
				select {
				case names <- signalName(s):
				default: // the exec has not taken the last ones: drop, as a terminal would
				}
			case <-done:
				return
			}
		}
	}()
	return names, func() { signal.Stop(caught); close(done) }
}

// signalName is a caught signal's name as the exec protocol spells it.
func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "TERM"
	case syscall.SIGHUP:
		return "HUP"
	case syscall.SIGQUIT:
		return "QUIT"
	}
	return "INT"
}
