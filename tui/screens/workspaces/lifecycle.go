package workspaces

import (
	"time"

	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
)

// A workspace's lifecycle (docs/api.md#expiry-and-archiving) as the list
// and the detail pane show it: when it expires, and whether its idle
// volume was archived to a snapshot.

// expiresCell is the EXPIRES column: the time left ("in 3h", "due" once
// passed), or the dash when the workspace does not expire.
func expiresCell(c *deps.Deps, w *cairn.Workspace) string {
	if w.ExpiresAt == nil {
		return c.Theme.Glyphs.Dash
	}
	return optional.Until(c.Data.Now(), *w.ExpiresAt)
}

// expiresStyle colours an expiry that is due, or within the hour before
// it, when the maintainer warns of it by default.
func expiresStyle(c *deps.Deps, w *cairn.Workspace) (lipgloss.Style, bool) {
	if w.ExpiresAt == nil {
		return lipgloss.Style{}, false
	}
	left := w.ExpiresAt.Sub(c.Data.Now())
	if left <= 0 {
		return c.Theme.Bad, true
	}
	return c.Theme.Warn, left <= time.Hour
}

// lifecycleLines are the detail pane's lifecycle fields, each only when
// set: the expiry and the ttl that moves it, the idle bound, the last
// activity and the snapshot an archived volume is in.
func lifecycleLines(c *deps.Deps, w *cairn.Workspace) []string {
	th, now := c.Theme, c.Data.Now()
	var lines []string
	if w.ExpiresAt != nil {
		lines = append(lines, pane.Field(th, "Expires", optional.Expiry(now, *w.ExpiresAt)))
	}
	if w.TTLSecs != nil {
		lines = append(lines, pane.Field(th, "TTL", optional.Span(*w.TTLSecs)+" "+th.Glyphs.Dot+" a touch moves the expiry"))
	}
	if b := w.ArchiveIdleAfterSecs; b != nil {
		bound := "never archived"
		if *b > 0 {
			bound = "archived after " + optional.Span(*b) + " idle"
		}
		lines = append(lines, pane.Field(th, "Idle bound", bound))
	}
	if !w.LastActiveAt.IsZero() {
		lines = append(lines, pane.Field(th, "Last active", pane.Stamped(now, w.LastActiveAt)))
	}
	if w.ArchivedSnapshotID != nil {
		if optional.Archived(w) {
			lines = append(lines, pane.Field(th, "Archived", "setup (v) restores it"))
		}
		lines = append(lines, pane.Field(th, "Archive", "snapshot "+termkit.Sanitize(*w.ArchivedSnapshotID)))
	}
	return lines
}
