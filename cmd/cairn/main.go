// Command cairn is the cairn server, maintainer, migrator, local dev stack
// and (later) command-line client, in one binary.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "cairn:", err)
		var exit exitError
		if errors.As(err, &exit) {
			os.Exit(int(exit))
		}
		os.Exit(1)
	}
}

// exitError carries a specific exit status out of a command.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
