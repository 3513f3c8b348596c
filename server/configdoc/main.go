// Command configdoc writes docs/configuration.md, the reference of the
// server's configuration file, from package server itself: the keys and
// their types from server.Config by reflection, each key's description
// from its field's doc comment (read with go/ast), the defaults from
// server.DefaultConfig, and the ranges, values and patterns from
// server.ConfigRule, the table Validate checks. `go generate ./server/...`
// runs it; its test fails while the committed file differs.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	src := flag.String("src", ".", "the directory of package server's source")
	out := flag.String("out", "../docs/configuration.md", "the file to write")
	flag.Parse()
	if err := run(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "configdoc:", err)
		os.Exit(1)
	}
}

func run(src, out string) error {
	docs, err := fieldDocs(src)
	if err != nil {
		return err
	}
	page, err := render(docs)
	if err != nil {
		return err
	}
	return os.WriteFile(out, page, 0o644)
}
