// Package artifacts is the screen of one workspace's artifacts, RECORDED
// and MISSING_OBJECT alike, with a detail pane.
package artifacts

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// row is one artifact with its filter text and the untrusted text its
// cells show (name, MIME type, the description's first line), sanitised
// once when the row is built: the table renders a row again only when it
// or its stamp changes, never per frame.
type row struct {
	art              *cairn.Artifact
	key              string
	name, mime, desc string
	// sortKeys are the row's keys in each order o cycles through, made
	// with the row: a re-sort of 10 000 rows then reads each row once
	// instead of chasing its artifact.
	sortKeys [sortCount]table.Key
}

func newRow(a *cairn.Artifact) *row {
	r := &row{
		art:  a,
		key:  strings.ToLower(a.Name + "\n" + optional.FirstLine(a.Description)),
		name: termkit.Sanitize(a.Name),
		mime: termkit.Sanitize(mime(a)),
		desc: pane.Line(a.Description),
	}
	for by := range sortCount {
		r.sortKeys[by] = sortKey(by, a)
	}
	return r
}

func (r *row) RowID() string     { return r.art.ID }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.art.ID }

func missing(a *cairn.Artifact) bool { return a.State == cairn.ArtifactMissingObject }

func stateCell(c *deps.Deps, a *cairn.Artifact) string {
	g := c.Theme.Glyphs
	if word := c.Data.Pending(a.ID); word != "" {
		return g.Frame(c.Data.Frame()) + " " + word
	}
	if missing(a) {
		return g.Missing + " MISSING"
	}
	return g.Recorded + " RECORDED"
}

// mime is the type without parameters.
func mime(a *cairn.Artifact) string {
	t, _, _ := strings.Cut(a.MIMEType, ";")
	return strings.TrimSpace(t)
}

func columns(c *deps.Deps) []table.Column[*row] {
	return []table.Column[*row]{
		{Title: "NAME", Min: 12, Max: 48, Flex: true, Fit: true, Cell: func(r *row) string { return r.name }},
		{Title: "STATE", Min: 11, Cell: func(r *row) string { return stateCell(c, r.art) }, Style: func(r *row) (lipgloss.Style, bool) {
			switch {
			case c.Data.Pending(r.art.ID) != "":
				return c.Theme.Pending, true
			case missing(r.art):
				return c.Theme.Bad, true
			}
			return c.Theme.Good, true
		}},
		{Title: "SIZE", Min: 10, Right: true, Drop: 4, Cell: func(r *row) string { return termkit.Size(r.art.Size) }},
		{Title: "UPDATED", Min: 7, Drop: 3, Cell: func(r *row) string { return termkit.Age(c.Data.Now(), r.art.UpdatedAt) }},
		{Title: "MIME", Min: 10, Max: 28, Flex: true, Fit: true, Drop: 2, Cell: func(r *row) string { return r.mime }},
		{Title: "DESCRIPTION", Min: 12, Flex: true, Drop: 1, Cell: func(r *row) string { return r.desc }},
	}
}

func stamp(c *deps.Deps, r *row) string {
	age := termkit.Age(c.Data.Now(), r.art.UpdatedAt)
	if p := c.Data.Pending(r.art.ID); p != "" {
		return p + c.Theme.Glyphs.Frame(c.Data.Frame()) + age
	}
	return age
}

// sortCount is how many orders o cycles through.
const sortCount = 5

// sortName names the order: name → size → updated → created → state.
func sortName(by int) string {
	return [sortCount]string{"name", "size", "updated", "created", "state"}[by%sortCount]
}

// order is the sort key of sort by: largest and newest first,
// MISSING_OBJECT before RECORDED (the rows that need attention), names and
// creation ascending.
func order(by int) func(*row) table.Key {
	by %= sortCount
	return func(r *row) table.Key { return r.sortKeys[by] }
}

// sortKey is a's key in order by.
func sortKey(by int, a *cairn.Artifact) table.Key {
	switch sortName(by) {
	case "size":
		return table.Key{N: -a.Size}
	case "updated":
		return table.Key{N: -a.UpdatedAt.UnixNano()}
	case "created":
		return table.Key{N: a.CreatedAt.UnixNano()}
	case "state":
		if missing(a) {
			return table.Key{S: a.Name}
		}
		return table.Key{N: 1, S: a.Name}
	}
	return table.Key{S: a.Name}
}
