// Command gen writes tui/keys/keys.md from the registry; run it with
// `go generate ./tui/keys`.
package main

import (
	"log"
	"os"

	"github.com/cairn-dev/cairn/tui/keys"
)

func main() {
	if err := os.WriteFile("keys.md", []byte(keys.Markdown()), 0o644); err != nil {
		log.Fatal(err)
	}
}
