// Command cairn-sidecar is the in-container helper of cairn. It takes its
// command as the only argument and everything else from CAIRN_* environment
// variables, and prints exactly one JSON result line.
//
// Three commands keep a shell instead (package ptyshell/holder): "hold" runs
// as a shell container's main process, "relay [SOCKET]" joins stdin and
// stdout to the holder's socket, which is how a server reaches it, and
// "install-holder DEST" copies this binary to DEST, which is how a
// Kubernetes shell pod gets it. They live in this binary so the one image
// that every runtime already has carries them too.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cairn-dev/cairn/ptyshell/holder"
	"github.com/cairn-dev/cairn/sidecar"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case holder.CommandHold:
			exit(holder.Main(context.Background()))
		case holder.CommandRelay:
			socket := holder.DefaultSocket
			if len(os.Args) > 2 {
				socket = os.Args[2]
			}
			exit(holder.Relay(socket, os.Stdin, os.Stdout))
		case holder.CommandInstall:
			dest := "" // Install refuses none, or more than one
			if len(os.Args) == 3 {
				dest = os.Args[2]
			}
			exit(holder.Install(dest))
		}
	}
	os.Exit(sidecar.Main(os.Args[1:], os.Getenv, os.Stdin, os.Stdout))
}

// exit ends a holder command: its own failure only, never a byte of the
// session.
func exit(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "cairn-sidecar:", err)
		os.Exit(1)
	}
	os.Exit(0)
}
