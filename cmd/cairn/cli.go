package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/cairn-dev/cairn/client"
)

// cli holds what every client command shares: where the server is, the
// token, the output format and the streams.
type cli struct {
	server string
	token  string
	output string // table, json or name; "" until resolved
	quiet  bool

	stdout, stderr io.Writer
}

// newClientCommands returns the client commands of ARCHITECTURE §8, which
// share the --server, --token, -o and --quiet flags.
func newClientCommands() []*cobra.Command {
	// Streams are bound when a command runs; a shell completion runs none,
	// and says nothing on stderr.
	c := &cli{stdout: io.Discard, stderr: io.Discard}
	cmds := []*cobra.Command{newWorkspaceCommand(c), newArtifactCommand(c), newSweepCommand(c), newAuditCommand(c),
		newEventsCommand(c), newShellCommand(c), newFilesCommand(c)}
	for _, cmd := range cmds {
		f := cmd.PersistentFlags()
		f.StringVar(&c.server, "server", "", "server URL (env CAIRN_URL; else the config file 'cairn dev' writes)")
		f.StringVar(&c.token, "token", "", "bearer token; visible to other users in ps, prefer env CAIRN_TOKEN")
		f.StringVarP(&c.output, "output", "o", "", "output format: table, json or name (default table on a terminal, else json)")
		f.BoolVarP(&c.quiet, "quiet", "q", false, "no progress bars or messages on stderr")
		cmd.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return c.prepare(cmd) }
		cmd.SetFlagErrorFunc(flagUsage)
	}
	return cmds
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

// clientConfig is the part of the client config file (written by
// 'cairn dev', shared with cairn-tui) that the CLI reads.
type clientConfig struct {
	Server    string `yaml:"server"`
	Token     string `yaml:"token"`
	TokenFile string `yaml:"token_file"`

	tokenFrom string // the file the token was read from
}

// clientConfigPath is $XDG_CONFIG_HOME/cairn/config.yaml, or
// ~/.config/cairn/config.yaml.
func clientConfigPath() (string, error) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "cairn", "config.yaml"), nil
}

// readClientConfig reads the config file; an absent one is empty.
func readClientConfig() (clientConfig, error) {
	var cfg clientConfig
	path, err := clientConfigPath()
	if err != nil {
		return cfg, nil //nolint:nilerr // no home directory: no file to read
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return cfg, fmt.Errorf("%s: %w", path, err)
	}
	cfg.tokenFrom = path
	if cfg.Token == "" && cfg.TokenFile != "" {
		b, err := os.ReadFile(cfg.TokenFile)
		if err != nil {
			return cfg, fmt.Errorf("%s: token_file: %w", path, err)
		}
		cfg.Token, cfg.tokenFrom = strings.TrimSpace(string(b)), cfg.TokenFile
	}
	return cfg, nil
}

// client builds the API client. Each setting comes from its flag, else its
// environment variable, else the config file; the file's token is only
// ever sent to the file's server.
func (c *cli) client() (*client.Client, error) {
	cfg, err := readClientConfig()
	if err != nil {
		return nil, err
	}
	server := firstOf(c.server, os.Getenv("CAIRN_URL"), cfg.Server)
	if server == "" {
		return nil, usagef("no server: pass --server, set CAIRN_URL, or run 'cairn dev'")
	}
	token := firstOf(c.token, os.Getenv("CAIRN_TOKEN"))
	if token == "" && strings.TrimRight(cfg.Server, "/") == strings.TrimRight(server, "/") {
		token = cfg.Token
		if token != "" {
			c.warnIfShared(cfg.tokenFrom)
		}
	}
	if c.token != "" && !c.quiet {
		fmt.Fprintln(c.stderr, "warning: a token on the command line is visible to other users; prefer CAIRN_TOKEN")
	}
	cl, err := client.New(server, client.WithToken(token), client.WithUserAgent("cairn-cli/"+version))
	if err != nil {
		return nil, usagef("%v", err)
	}
	return cl, nil
}

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

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
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
