// Package workspaces is the root screen: every workspace with its volume
// state and artifact counts, and its detail pane.
package workspaces

import (
	"math"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// row is one workspace with its filter text and the untrusted text its
// cells show (name, the description's first line), sanitised once when the
// row is built: the table renders a row again only when it or its stamp
// changes, never per frame.
type row struct {
	ws         *cairn.Workspace
	key        string
	name, desc string
}

func newRow(w *cairn.Workspace) *row {
	return &row{
		ws:   w,
		key:  strings.ToLower(w.Name + "\n" + optional.FirstLine(w.Description)),
		name: termkit.Sanitize(w.Name),
		desc: pane.Line(w.Description),
	}
}

func (r *row) RowID() string     { return r.ws.ID }
func (r *row) FilterKey() string { return r.key }

func rowID(r *row) string { return r.ws.ID }

// volumeCell is the glyph and word of the volume: a pending operation's
// word while one runs, the warning glyph on a READY volume that cannot
// take containers now (its volume_issue; the detail pane says why), and
// ARCHIVED for a volume (NONE) the maintainer archived to a snapshot when
// it was idle, which the next setup restores.
func volumeCell(c *deps.Deps, w *cairn.Workspace) string {
	g := c.Theme.Glyphs
	if word := c.Data.Pending(w.ID); word != "" {
		return g.Frame(c.Data.Frame()) + " " + word
	}
	switch {
	case w.VolumeState == cairn.VolumeReady && w.VolumeIssue != nil:
		return g.Missing + " READY"
	case w.VolumeState == cairn.VolumeReady:
		return g.Ready + " READY"
	case optional.Archived(w):
		return g.Archived + " ARCHIVED"
	}
	return g.None + " NONE"
}

// volumeStyle colours volumeCell: pending and archived dim, an issue in
// the warning colour, READY good.
func volumeStyle(c *deps.Deps, w *cairn.Workspace) (lipgloss.Style, bool) {
	switch {
	case c.Data.Pending(w.ID) != "":
		return c.Theme.Pending, true
	case w.VolumeIssue != nil:
		return c.Theme.Warn, true
	case optional.Archived(w):
		return c.Theme.Dim, true
	}
	return c.Theme.Good, w.VolumeState == cairn.VolumeReady
}

func countCell(c *deps.Deps, w *cairn.Workspace, missing bool) string {
	n, ok := c.Data.Store().Counts(w.ID)
	switch {
	case !ok:
		return c.Theme.Glyphs.Dash
	case missing:
		return termkit.Count(n.Missing)
	}
	return termkit.Count(n.Total())
}

func columns(c *deps.Deps) []table.Column[*row] {
	return []table.Column[*row]{
		{Title: "NAME", Min: 12, Max: 48, Flex: true, Fit: true, Cell: func(r *row) string { return r.name }},
		{Title: "VOLUME", Min: 15, Cell: func(r *row) string { return volumeCell(c, r.ws) },
			Style: func(r *row) (lipgloss.Style, bool) { return volumeStyle(c, r.ws) }},
		{Title: "ARTIFACTS", Min: 9, Right: true, Drop: 4, Cell: func(r *row) string { return countCell(c, r.ws, false) }},
		{Title: "MISSING", Min: 7, Right: true, Drop: 5, Cell: func(r *row) string { return countCell(c, r.ws, true) }, Style: func(r *row) (lipgloss.Style, bool) {
			n, ok := c.Data.Store().Counts(r.ws.ID)
			return c.Theme.Bad, ok && n.Missing > 0
		}},
		{Title: "EXPIRES", Min: 7, Drop: 3, Cell: func(r *row) string { return expiresCell(c, r.ws) },
			Style: func(r *row) (lipgloss.Style, bool) { return expiresStyle(c, r.ws) },
			Used:  func(r *row) bool { return r.ws.ExpiresAt != nil }},
		{Title: "UPDATED", Min: 7, Drop: 2, Cell: func(r *row) string { return termkit.Age(c.Data.Now(), r.ws.UpdatedAt) }},
		{Title: "DESCRIPTION", Min: 12, Flex: true, Drop: 1, Cell: func(r *row) string { return r.desc }},
	}
}

// stamp is what a row's cells read besides the row: pending word and
// spinner step, counts, and the age and expiry labels.
func stamp(c *deps.Deps, r *row) string {
	var b strings.Builder
	if p := c.Data.Pending(r.ws.ID); p != "" {
		b.WriteString(p)
		b.WriteString(c.Theme.Glyphs.Frame(c.Data.Frame()))
	}
	if n, ok := c.Data.Store().Counts(r.ws.ID); ok {
		b.WriteString(termkit.Count(n.Recorded) + "/" + termkit.Count(n.Missing))
	}
	b.WriteString(termkit.Age(c.Data.Now(), r.ws.UpdatedAt))
	b.WriteString(expiresCell(c, r.ws))
	return b.String()
}

// sortCount is how many orders o cycles through.
const sortCount = 5

// sortName names the order by: name → updated → created → missing →
// expires.
func sortName(by int) string {
	return [sortCount]string{"name", "updated", "created", "missing", "expires"}[by%sortCount]
}

// noExpiry sorts the workspaces that do not expire after every one that
// does.
const noExpiry = math.MaxInt64

// order is the sort key of sort by: newest updates and most missing first,
// names, creation and expiry ascending (the soonest expiry first).
func order(c *deps.Deps, by int) func(*row) table.Key {
	switch sortName(by) {
	case "expires":
		return func(r *row) table.Key {
			if r.ws.ExpiresAt == nil {
				return table.Key{N: noExpiry, S: r.ws.Name}
			}
			return table.Key{N: r.ws.ExpiresAt.UnixNano(), S: r.ws.Name}
		}
	case "updated":
		return func(r *row) table.Key { return table.Key{N: -r.ws.UpdatedAt.UnixNano()} }
	case "created":
		return func(r *row) table.Key { return table.Key{N: r.ws.CreatedAt.UnixNano()} }
	case "missing":
		return func(r *row) table.Key {
			n, _ := c.Data.Store().Counts(r.ws.ID)
			return table.Key{N: -n.Missing, S: r.ws.Name}
		}
	}
	return func(r *row) table.Key { return table.Key{S: r.ws.Name} }
}
