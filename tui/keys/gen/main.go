// Command gen writes the key table of docs/tui.md from the registry,
// between its marker lines; run it with `go generate ./tui/keys`.
package main

import (
	"errors"
	"log"
	"os"
	"path/filepath"

	"github.com/cairn-dev/cairn/tui/keys"
)

func main() {
	root, err := moduleRoot()
	if err != nil {
		log.Fatal(err)
	}
	path := filepath.Join(root, keys.DocPath)
	doc, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	out, err := keys.Splice(string(doc), keys.Markdown())
	if err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		log.Fatal(err)
	}
}

// moduleRoot is the nearest directory at or above the working directory
// that holds go.mod: go generate runs in tui/keys, go run wherever it is
// called.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above the working directory")
		}
		dir = parent
	}
}
