package tui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// maxDirEntries bounds what one completion reads of a directory.
const maxDirEntries = 5000

// expandHome turns a leading ~ into the home directory.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~"))
}

// completeCmd completes a local path field like a shell: one match is
// taken whole (a directory gets its slash), several extend to their
// longest common prefix and are listed. It reads the directory, so it
// runs in a Cmd.
func completeCmd(key string) func(string) tea.Cmd {
	return func(value string) tea.Cmd {
		return func() tea.Msg {
			completed, cands := completePath(value, readDir)
			return form.CompletedMsg{Key: key, From: value, Value: completed, Candidates: cands}
		}
	}
}

// dirEntry is a name in a directory and whether it leads to a directory.
type dirEntry struct {
	name string
	dir  bool
}

// readDir lists at most maxDirEntries names of dir, symlinks followed to
// tell directories.
func readDir(dir string) []dirEntry {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxDirEntries) // what could be read is what is offered
	out := make([]dirEntry, 0, len(ents))
	for _, e := range ents {
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				isDir = fi.IsDir()
			}
		}
		out = append(out, dirEntry{name: e.Name(), dir: isDir})
	}
	return out
}

// completePath is the completion of value over the entries read by list:
// the new value ("" when nothing matches) and the candidates when more
// than one does. Hidden names are offered only for a prefix starting
// with a dot.
func completePath(value string, list func(string) []dirEntry) (string, []string) {
	dir, base := "", value
	if i := strings.LastIndex(value, "/"); i >= 0 {
		dir, base = value[:i+1], value[i+1:]
	}
	lookIn := expandHome(dir)
	if lookIn == "" {
		lookIn = "."
	}
	var names []string
	dirs := map[string]bool{}
	for _, e := range list(lookIn) {
		if !strings.HasPrefix(e.name, base) || (strings.HasPrefix(e.name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		names = append(names, e.name)
		dirs[e.name] = e.dir
	}
	slices.Sort(names)
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		if dirs[names[0]] {
			return dir + names[0] + "/", nil
		}
		return dir + names[0], nil
	}
	cands := make([]string, len(names))
	for i, n := range names {
		cands[i] = n
		if dirs[n] {
			cands[i] += "/"
		}
	}
	return dir + commonPrefix(names), cands
}

func commonPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			_, size := utf8.DecodeLastRuneInString(p)
			p = p[:len(p)-size]
		}
	}
	return p
}
