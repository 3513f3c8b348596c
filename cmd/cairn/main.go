// Command cairn is the cairn server, maintainer, migrator, local dev stack
// and (later) command-line client, in one binary.
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

	"github.com/cairn-dev/cairn/internal/termkit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		os.Exit(report(os.Stderr, err))
	}
}

// report writes a command's error to stderr and returns the status to exit
// with: the one the error carries, else 1.
func report(stderr io.Writer, err error) int {
	if !errors.Is(err, errNothingMatched) {
		// An error may quote the server, so it is sanitised like any of its text.
		fmt.Fprintln(stderr, "cairn:", strings.Join(termkit.SanitizeLines(err.Error(), nil), "\n"))
	}
	var exit exitError
	if errors.As(err, &exit) {
		return int(exit)
	}
	return 1
}

// exitError carries a specific exit status out of a command.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
