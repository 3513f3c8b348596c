package snapshots

import (
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// row is one snapshot with the untrusted text its cells show (its name)
// sanitised once, when it is built.
type row struct {
	snap *cairn.Snapshot
	key  string
	name string
}

func newRow(s *cairn.Snapshot) *row {
	return &row{
		snap: s,
		key:  strings.ToLower(s.Name + "\n" + optional.String(s.CreatedBy)),
		name: termkit.Sanitize(s.Name),
	}
}

func (r *row) RowID() string     { return r.snap.ID }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.snap.ID }

// liveCell is a pending operation's word while one runs (a delete), else
// whether the snapshot was taken live.
func liveCell(c *deps.Deps, s *cairn.Snapshot) string {
	g := c.Theme.Glyphs
	if word := c.Data.Pending(s.ID); word != "" {
		return g.Frame(c.Data.Frame()) + " " + word
	}
	if s.Live {
		return "live"
	}
	return g.Dash
}

func columns(c *deps.Deps) []table.Column[*row] {
	return []table.Column[*row]{
		{Title: "NAME", Min: 12, Max: 48, Flex: true, Fit: true, Cell: func(r *row) string { return r.name }},
		{Title: "AGE", Min: 7, Drop: 3, Cell: func(r *row) string { return termkit.Age(c.Data.Now(), r.snap.CreatedAt) }},
		{Title: "ENTRIES", Min: 8, Right: true, Drop: 1, Cell: func(r *row) string { return termkit.Count(int64(r.snap.Entries)) }},
		{Title: "SIZE", Min: 10, Right: true, Cell: func(r *row) string { return termkit.Size(r.snap.Bytes) }},
		{Title: "UPLOADED", Min: 10, Right: true, Drop: 2, Cell: func(r *row) string { return termkit.Size(r.snap.UploadedBytes) }},
		{Title: "LIVE", Min: 10, Cell: func(r *row) string { return liveCell(c, r.snap) }, Style: func(r *row) (lipgloss.Style, bool) {
			switch {
			case c.Data.Pending(r.snap.ID) != "":
				return c.Theme.Pending, true
			case r.snap.Live:
				return c.Theme.Warn, true
			}
			return lipgloss.Style{}, false
		}},
	}
}

// stamp is what a row's cells read besides the row: its age, and the
// pending word and spinner step.
func stamp(c *deps.Deps, r *row) string {
	age := termkit.Age(c.Data.Now(), r.snap.CreatedAt)
	if p := c.Data.Pending(r.snap.ID); p != "" {
		return p + c.Theme.Glyphs.Frame(c.Data.Frame()) + age
	}
	return age
}

// oldestFirst orders snapshots as the API lists them.
func oldestFirst(r *row) table.Key { return table.Key{N: r.snap.CreatedAt.UnixNano(), S: r.snap.ID} }
