// Command cairn-tui is the terminal workbench over a cairn server: flags,
// environment and the client config file in, the TUI out.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui"
	"github.com/cairn-dev/cairn/tui/config"
	"github.com/cairn-dev/cairn/tui/shell"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run is the program; it returns the exit status: 0 done, 1 failed, 2
// usage or configuration (a key conflict included), always before the alt
// screen.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := config.Load(config.Input{Args: args})
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintf(stdout, "usage: cairn-tui [flags]\n\n%s", config.FlagUsage())
		return 0
	case err != nil:
		fmt.Fprintln(stderr, "cairn-tui:", err)
		return 2
	case cfg.Version:
		fmt.Fprintln(stdout, "cairn-tui", version)
		return 0
	}
	km, err := resolveKeys(cfg)
	if err != nil {
		fmt.Fprintln(stderr, "cairn-tui:", err)
		return 2
	}
	if cfg.PrintConfig {
		if err := cfg.Print(stdout, bindings(km, cfg.Warnings)); err != nil {
			return 1
		}
		return 0
	}
	c, err := client.New(cfg.Server, client.WithToken(cfg.Token), client.WithUserAgent("cairn-tui/"+version))
	if err != nil {
		fmt.Fprintln(stderr, "cairn-tui:", err)
		return 2
	}
	err = tui.Run(ctx, tui.RunOptions{
		Options: tui.Options{Config: cfg, Backend: c, Keys: km, Connect: connector(cfg),
			ShellSecrets: shellSecrets()},
		StdoutTerminal: isTerminal(stdout),
	})
	if err != nil {
		fmt.Fprintln(stderr, "cairn-tui:", err)
		return 1
	}
	return 0
}

// connector opens a context of the config file for :ctx: its server and
// token resolved now (a token command runs), a client over them.
func connector(cfg *config.Config) tui.Connector {
	if len(cfg.Contexts) == 0 {
		return nil
	}
	return func(name string) (tui.Backend, string, error) {
		ep, err := cfg.OpenContext(name)
		if err != nil {
			return nil, "", err
		}
		c, err := client.New(ep.Server, client.WithToken(ep.Token), client.WithUserAgent("cairn-tui/"+version))
		if err != nil {
			return nil, "", err
		}
		return c, ep.Server, nil
	}
}

// shellSecrets keeps the v2 shells' secrets where `cairn shell --attach`
// finds them, so a shell opened here is resumed from either; nil (memory)
// when there is no state directory.
func shellSecrets() shell.Keeper {
	keep, err := client.DefaultShellSecrets()
	if err != nil {
		return nil
	}
	return keep
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
