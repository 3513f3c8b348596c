package files

import (
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// row is one entry of the directory, with what its cells show made once:
// the name sanitised (a volume's names are anyone's bytes), a directory's
// with a slash, a symlink's with its target (`name -> target`).
type row struct {
	e    cairn.FileEntry
	name string
	key  string // lower-cased name, for the filter
	mode string // ls-style: -rw-r--r--
	// sortKeys are the row's keys in each order o cycles through.
	sortKeys [sortCount]table.Key
}

func newRow(e cairn.FileEntry) *row {
	name := termkit.Sanitize(e.Name)
	switch e.Type {
	case cairn.FileTypeDir:
		name += "/"
	case cairn.FileTypeSymlink:
		name += " -> " + termkit.Sanitize(optional.String(e.LinkTarget))
	}
	r := &row{e: e, name: name, key: strings.ToLower(e.Name), mode: ModeString(e.Type, e.Mode)}
	for by := range sortCount {
		r.sortKeys[by] = sortKey(by, e)
	}
	return r
}

func (r *row) RowID() string     { return r.e.Name }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.e.Name }

// isDir, isLink, isFile and addressable say what can be done with it.
func (r *row) isDir() bool       { return r.e.Type == cairn.FileTypeDir }
func (r *row) isLink() bool      { return r.e.Type == cairn.FileTypeSymlink }
func (r *row) isFile() bool      { return r.e.Type == cairn.FileTypeFile }
func (r *row) addressable() bool { return dialog.Addressable(r.e.Name) }

func columns(c *deps.Deps) []table.Column[*row] {
	return []table.Column[*row]{
		{Title: "NAME", Min: 12, Max: 80, Flex: true, Fit: true, Cell: func(r *row) string { return r.name },
			Style: func(r *row) (lipgloss.Style, bool) { return c.Theme.Bold, r.isDir() }},
		{Title: "SIZE", Min: 10, Right: true, Drop: 3, Cell: func(r *row) string { return sizeCell(c, r) }},
		{Title: "MODE", Min: 10, Drop: 1, Cell: func(r *row) string { return r.mode }},
		{Title: "MODIFIED", Min: 8, Drop: 2, Cell: func(r *row) string { return termkit.Age(c.Data.Now(), r.e.MTime) }},
	}
}

// sizeCell is a file's size; a directory's or a link's says nothing
// about its content, so it shows as a dash.
func sizeCell(c *deps.Deps, r *row) string {
	if r.isFile() {
		return termkit.Size(r.e.Size)
	}
	return c.Theme.Glyphs.Dash
}

// stamp is what a row's cells read besides the row: its age.
func stamp(c *deps.Deps, r *row) string { return termkit.Age(c.Data.Now(), r.e.MTime) }

// sortCount is how many orders o cycles through: name (byte order, as
// listed) → size → modified.
const sortCount = 3

func sortName(by int) string { return [sortCount]string{"name", "size", "modified"}[by%sortCount] }

func order(by int) func(*row) table.Key {
	by %= sortCount
	return func(r *row) table.Key { return r.sortKeys[by] }
}

// sortKey is e's key in order by: largest and newest first, names in byte
// order (the table breaks ties by ID, the name).
func sortKey(by int, e cairn.FileEntry) table.Key {
	switch sortName(by) {
	case "size":
		return table.Key{N: -e.Size}
	case "modified":
		return table.Key{N: -e.MTime.UnixNano()}
	}
	return table.Key{}
}

// ModeString renders a type and four octal digits ("0755") as ls does:
// drwxr-xr-x, with setuid, setgid and sticky as s/S and t/T. An
// unreadable mode shows as given.
func ModeString(typ, mode string) string {
	bits, err := strconv.ParseUint(mode, 8, 16)
	if err != nil {
		return termkit.Sanitize(mode)
	}
	out := []byte("?---------")
	switch typ {
	case cairn.FileTypeDir:
		out[0] = 'd'
	case cairn.FileTypeSymlink:
		out[0] = 'l'
	case cairn.FileTypeFile:
		out[0] = '-'
	}
	for i, c := range "rwxrwxrwx" {
		if bits&(1<<(8-i)) != 0 {
			out[1+i] = byte(c)
		}
	}
	special := func(bit uint64, at int, set, unset byte) {
		if bits&bit == 0 {
			return
		}
		if out[at] == 'x' {
			out[at] = set
		} else {
			out[at] = unset
		}
	}
	special(0o4000, 3, 's', 'S')
	special(0o2000, 6, 's', 'S')
	special(0o1000, 9, 't', 'T')
	return string(out)
}
