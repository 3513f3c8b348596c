package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/clientconf"
)

// cli holds what every client command shares: where the server is, the
// token, the output format and the streams.
type cli struct {
	server  string
	token   string
	context string // --context: a context of the client config file
	output  string // table, json or name; "" until resolved
	quiet   bool

	stdout, stderr io.Writer
}

// newClientCommands returns the commands that talk to a server, which share
// the --server, --token, --context, -o and --quiet flags, and the config
// command, which shares -o and --quiet.
func newClientCommands() []*cobra.Command {
	// Streams are bound when a command runs; a shell completion runs none,
	// and says nothing on stderr.
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	cmds := []*cobra.Command{newWorkspaceCommand(c), newArtifactCommand(c), newSweepCommand(c), newAuditCommand(c), newWebhooksCommand(c),
		newEventsCommand(c), newShellCommand(c), newFilesCommand(c), newInfoCommand(c)}
	cmds = append(cmds, newExecCommand(c))
	for _, cmd := range cmds {
		f := cmd.PersistentFlags()
		f.StringVar(&c.server, "server", "", "server URL (env CAIRN_URL; else the config file 'cairn dev' writes)")
		f.StringVar(&c.token, "token", "", "bearer token; visible to other users in ps, prefer env CAIRN_TOKEN")
		f.StringVar(&c.context, "context", "", "a context of the client config file: its server and token (env CAIRN_CONTEXT)")
		f.StringVarP(&c.output, "output", "o", "", "output format: table, json or name (default table on a terminal, else json)")
		f.BoolVarP(&c.quiet, "quiet", "q", false, "no progress bars or messages on stderr")
		cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return c.prepare(cmd) }
		cmd.SetFlagErrorFunc(flagUsage)
		_ = cmd.RegisterFlagCompletionFunc("context", completeContexts) // fails only for a flag that does not exist
	}
	return append(cmds, newConfigCommand(c))
}

// prepare resolves the output format and binds the command's streams.
func (c *cli) prepare(cmd *cobra.Command) error {
	c.stdout, c.stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch c.output {
	case "":
		c.output = "json"
		if isTerminal(c.stdout) {
			c.output = "table"
		}
	case "table", "json", "name":
	default:
		return failure(usagef("-o %q: expected table, json or name", c.output))
	}
	return nil
}

// client builds the API client, its server and token resolved by
// clientconf (flags, --context or CAIRN_CONTEXT, CAIRN_URL and
// CAIRN_TOKEN, the file's current-context, its top level). A problem with
// the config — an unknown context, a token source that gives nothing —
// exits 2 and names the context.
func (c *cli) client() (*client.Client, error) {
	r, err := c.endpoint(context.Background())
	if err != nil {
		return nil, err
	}
	if r.Server == "" {
		return nil, usagef("no server: pass --server, set CAIRN_URL, or run 'cairn dev'")
	}
	if r.TokenPath != "" {
		c.warnIfShared(r.TokenPath)
	}
	if c.token != "" && !c.quiet {
		fmt.Fprintln(c.stderr, "warning: a token on the command line is visible to other users; prefer CAIRN_TOKEN")
	}
	cl, err := client.New(r.Server, client.WithToken(r.Token), client.WithUserAgent("cairn-cli/"+version))
	if err != nil {
		return nil, usagef("%v", err)
	}
	return cl, nil
}

// endpoint resolves the server and token from the flags, the environment
// and the client config file.
func (c *cli) endpoint(ctx context.Context) (clientconf.Result, error) {
	f, err := clientconf.Read(clientConfigPath())
	if err != nil {
		return clientconf.Result{}, &usageError{err}
	}
	r, err := clientconf.Resolve(ctx, clientconf.Input{File: f, Server: c.server, Token: c.token, Context: c.context})
	if err != nil {
		return clientconf.Result{}, &usageError{err}
	}
	return r, nil
}

// clientConfigPath is the file 'cairn dev' writes and cairn-tui reads:
// $XDG_CONFIG_HOME/cairn/config.yaml, or ~/.config/cairn/config.yaml; ""
// without a home.
func clientConfigPath() string { return clientconf.DefaultPath(os.Getenv) }

// warnIfShared warns when the file holding the token is readable by
// others.
func (c *cli) warnIfShared(path string) {
	fi, err := os.Stat(path)
	if err == nil && fi.Mode().Perm()&0o077 != 0 && !c.quiet {
		fmt.Fprintf(c.stderr, "warning: %s holds a token and is readable by others; chmod 600 it\n", path)
	}
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}

// isTerminal reports whether the stream s (a writer, or stdin) is a
// terminal.
func isTerminal(s any) bool {
	f, ok := s.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the width tables fit: the terminal's, else 80.
func terminalWidth(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if width, _, err := term.GetSize(int(f.Fd())); err == nil && width > 0 {
			return width
		}
	}
	return 80
}

// note prints a message on stderr unless --quiet.
func (c *cli) note(format string, args ...any) {
	if !c.quiet {
		fmt.Fprintf(c.stderr, format+"\n", args...)
	}
}

// run is the RunE of a client command: it builds the client, then calls do,
// and gives its error an exit code.
func (c *cli) run(do func(cmd *cobra.Command, cl *client.Client, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		cl, err := c.client()
		if err != nil {
			return failure(err)
		}
		return failure(do(cmd, cl, args))
	}
}
