package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cairn-dev/cairn/internal/clientconf"
)

// newConfigCommand is 'cairn config': the contexts of the client config
// file, listed and chosen as kubectl's are. It reads and writes only the
// file; no server is asked.
func newConfigCommand(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "List and choose the contexts of the client config file (servers and where their tokens come from)",
		Args:  usage(cobra.NoArgs),
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	f := cmd.PersistentFlags()
	f.StringVarP(&c.output, "output", "o", "", "output format: table, json or name (default table on a terminal, else json)")
	f.BoolVarP(&c.quiet, "quiet", "q", false, "no messages on stderr")
	cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return c.prepare(cmd) }
	cmd.SetFlagErrorFunc(flagUsage)
	cmd.AddCommand(configGetContexts(c), configUseContext(c), configCurrentContext(c))
	return cmd
}

func configGetContexts(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "get-contexts",
		Short: "List the contexts; * marks the one in use (CAIRN_CONTEXT, else current-context)",
		Args:  usage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			f, err := readConfigFile()
			if err != nil {
				return err
			}
			return failure(c.emit(contextsView(f, c.currentContext(f))))
		},
	}
}

func configUseContext(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:               "use-context NAME",
		Short:             "Make NAME the current-context of the client config file",
		Args:              usage(cobra.ExactArgs(1)),
		ValidArgsFunction: completeContexts,
		RunE: func(_ *cobra.Command, args []string) error {
			path := clientConfigPath()
			if err := clientconf.UseContext(path, args[0]); err != nil {
				return failure(&usageError{err})
			}
			c.note("switched to context %q (in %s)", args[0], path)
			if env := os.Getenv("CAIRN_CONTEXT"); env != "" && env != args[0] {
				c.note("warning: CAIRN_CONTEXT=%s is set and overrides the file's current-context", env)
			}
			return nil
		},
	}
}

func configCurrentContext(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "current-context",
		Short: "Print the context in use: CAIRN_CONTEXT, else the file's current-context",
		Args:  usage(cobra.NoArgs),
		RunE: func(*cobra.Command, []string) error {
			f, err := readConfigFile()
			if err != nil {
				return err
			}
			name := c.currentContext(f)
			if name == "" {
				return failure(errors.New("no current context: run 'cairn config use-context NAME' or set CAIRN_CONTEXT"))
			}
			fmt.Fprintln(c.stdout, name)
			return nil
		},
	}
}

// currentContext is the context commands use when no --context is given:
// CAIRN_CONTEXT, else the file's current-context. A CAIRN_CONTEXT that
// overrides the file is said on stderr.
func (c *cli) currentContext(f *clientconf.File) string {
	env := os.Getenv("CAIRN_CONTEXT")
	if env == "" {
		return f.CurrentContext
	}
	if env != f.CurrentContext {
		c.note("CAIRN_CONTEXT=%s overrides the file's current-context", env)
	}
	return env
}

func readConfigFile() (*clientconf.File, error) {
	f, err := clientconf.Read(clientConfigPath())
	if err != nil {
		return nil, failure(&usageError{err})
	}
	return f, nil
}

// contextView is one context as -o json shows it: where its token comes
// from, never a token.
type contextView struct {
	Name        string `json:"name"`
	Server      string `json:"server"`
	TokenSource string `json:"token_source"`
	Current     bool   `json:"current"`
}

func contextsView(f *clientconf.File, current string) view {
	list := []contextView{}
	t := table{headers: []string{"CURRENT", "NAME", "SERVER", "TOKEN SOURCE"}, flex: 3}
	v := view{}
	for _, ctx := range f.Contexts {
		cv := contextView{Name: ctx.Name, Server: ctx.Server, TokenSource: ctx.TokenSource(), Current: ctx.Name == current}
		list = append(list, cv)
		mark := ""
		if cv.Current {
			mark = "*"
		}
		t.rows = append(t.rows, []string{mark, cv.Name, cv.Server, cv.TokenSource})
		v.names = append(v.names, cv.Name)
	}
	v.payload = struct {
		CurrentContext string        `json:"current_context"`
		Contexts       []contextView `json:"contexts"`
	}{current, list}
	v.table = t.write
	return v
}

// completeContexts completes a context name from the config file.
func completeContexts(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	f, err := clientconf.Read(clientConfigPath())
	if err != nil || len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return f.Names(), cobra.ShellCompDirectiveNoFileComp
}
