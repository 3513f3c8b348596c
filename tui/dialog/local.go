package dialog

import (
	"errors"
	"io/fs"
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

// ExpandHome turns a leading ~ into the home directory.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~"))
}

// Complete completes a local path field like a shell: one match is
// taken whole (a directory gets its slash), several extend to their
// longest common prefix and are listed. It reads the directory, so it
// runs in a Cmd.
func Complete(key string) func(string) tea.Cmd { return CompleteWith(key, readDir) }

// CompleteWith is Complete over the entries list reads (a volume's
// listing); list runs in the Cmd.
func CompleteWith(key string, list func(dir string) []DirEntry) func(string) tea.Cmd {
	return func(value string) tea.Cmd {
		return func() tea.Msg {
			completed, cands := CompletePath(value, list)
			return form.CompletedMsg{Key: key, From: value, Value: completed, Candidates: cands}
		}
	}
}

// DirEntry is a name in a directory and whether it leads to a directory.
type DirEntry struct {
	Name string
	Dir  bool
}

// readDir lists at most maxDirEntries names of dir, symlinks followed to
// tell directories.
func readDir(dir string) []DirEntry {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, _ := f.ReadDir(maxDirEntries) // what could be read is what is offered
	out := make([]DirEntry, 0, len(ents))
	for _, e := range ents {
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				isDir = fi.IsDir()
			}
		}
		out = append(out, DirEntry{Name: e.Name(), Dir: isDir})
	}
	return out
}

// CompletePath is the completion of value over the entries read by list:
// the new value ("" when nothing matches) and the candidates when more
// than one does. Hidden names are offered only for a prefix starting
// with a dot.
func CompletePath(value string, list func(string) []DirEntry) (string, []string) {
	dir, base := "", value
	if i := strings.LastIndex(value, "/"); i >= 0 {
		dir, base = value[:i+1], value[i+1:]
	}
	lookIn := ExpandHome(dir)
	if lookIn == "" {
		lookIn = "."
	}
	var names []string
	dirs := map[string]bool{}
	for _, e := range list(lookIn) {
		if !strings.HasPrefix(e.Name, base) || (strings.HasPrefix(e.Name, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		names = append(names, e.Name)
		dirs[e.Name] = e.Dir
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
	return dir + CommonPrefix(names), cands
}

// CommonPrefix is the longest prefix of whole runes that names share.
func CommonPrefix(names []string) string {
	p := names[0]
	for _, n := range names[1:] {
		for !strings.HasPrefix(n, p) {
			_, size := utf8.DecodeLastRuneInString(p)
			p = p[:len(p)-size]
		}
	}
	return p
}

// LocalStat is what a transfer form's path turned out to be on this
// machine.
type LocalStat struct {
	OpID   int
	Path   string // ~ expanded
	Size   int64
	Exists bool
	Err    string // the sentence under the path field
}

// StatLocal looks at a path: a source must be a regular file (symlinks
// followed); a target may be absent (in an existing directory) or a
// regular file, which is then overwritten only after a confirmation. It
// touches the disk, so it runs in a Cmd.
func StatLocal(opID int, raw string, source bool) LocalStat {
	p := ExpandHome(raw)
	msg := LocalStat{OpID: opID, Path: p}
	fi, err := os.Stat(p)
	switch {
	case err == nil && fi.IsDir():
		msg.Err = raw + " is a directory — name a file"
	case err == nil && !fi.Mode().IsRegular():
		msg.Err = raw + " is not a regular file"
	case err == nil:
		msg.Exists, msg.Size = true, fi.Size()
	case !errors.Is(err, fs.ErrNotExist):
		msg.Err = "cannot use " + raw + ": " + errors.Unwrap(err).Error()
	case source:
		msg.Err = "no such file: " + raw
	default:
		if d, derr := os.Stat(filepath.Dir(p)); derr != nil || !d.IsDir() {
			msg.Err = "the directory " + filepath.Dir(raw) + " does not exist"
		}
	}
	return msg
}
