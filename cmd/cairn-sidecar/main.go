// Command cairn-sidecar is the in-container helper of cairn. It takes its
// command as the only argument and everything else from CAIRN_* environment
// variables, and prints exactly one JSON result line.
package main

import (
	"os"

	"github.com/cairn-dev/cairn/sidecar"
)

func main() {
	os.Exit(sidecar.Main(os.Args[1:], os.Getenv, os.Stdin, os.Stdout))
}
