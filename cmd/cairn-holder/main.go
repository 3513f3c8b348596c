// Command cairn-holder keeps one shell in its container: run as the
// container's first process it starts the shell on a PTY and serves it on a
// local socket (its configuration comes from CAIRN_HOLDER_CONFIG and
// CAIRN_HOLDER_KEY); "cairn-holder relay [SOCKET]" joins stdin and stdout to
// that socket, which is how a server reaches it through the runtime.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/ptyshell/holder"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "relay" {
		socket := holder.DefaultSocket
		if len(os.Args) > 2 {
			socket = os.Args[2]
		}
		if err := holder.Relay(socket, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "cairn-holder relay:", err)
			os.Exit(1)
		}
		return
	}
	if err := holder.Main(context.Background()); err != nil {
		// Only the holder's own failure: never a byte of the session.
		fmt.Fprintln(os.Stderr, "cairn-holder:", err)
		os.Exit(1)
	}
}
