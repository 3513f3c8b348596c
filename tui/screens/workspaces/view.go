package workspaces

import (
	"fmt"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
)

// View draws the list and the detail pane.
func (s *Screen) View() string {
	return s.list.View("", s.empty(), s.detail())
}

// empty is the body when there is no row: loading, a failure with its
// retry, or the invitation to create one.
func (s *Screen) empty() string {
	if s.list.Table.Total() > 0 {
		return "no workspace matches the filter — esc clears it"
	}
	st := s.c.Data.List(store.Workspaces())
	switch {
	case st.Err != nil:
		return pane.Failure(s.c, "workspaces", st)
	case !s.c.Data.Store().Seeded(store.Workspaces()):
		return "loading workspaces…"
	case s.c.Config.ReadOnly:
		return "No workspaces yet."
	}
	return "No workspaces yet — n creates one."
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	w, ok := s.Selected()
	if !ok {
		return nil
	}
	return Detail(s.c, w, s.list.DetailWidth())
}

// Detail renders a workspace's detail lines for width.
func Detail(c *deps.Deps, w *cairn.Workspace, width int) []string {
	th := c.Theme
	now := c.Data.Now()
	lines := []string{
		" " + th.Bold.Render(termkit.Sanitize(w.Name)),
		pane.Field(th, "ID", w.ID),
		pane.Field(th, "Volume", volumeCell(c, w)),
		pane.Field(th, "Volume name", termkit.Sanitize(w.VolumeName)),
		pane.Field(th, "Mounts", mounts(c, w)),
		pane.Field(th, "Artifacts", artifacts(c, w)),
		pane.Field(th, "Created", pane.Stamped(now, w.CreatedAt)),
		pane.Field(th, "Updated", pane.Stamped(now, w.UpdatedAt)),
	}
	lines = append(lines, lifecycleLines(c, w)...)
	if w.VolumeIssue != nil {
		lines = append(lines, pane.Paragraph(th, "Volume issue", w.VolumeIssue.Detail, width)...)
	}
	if d := optional.String(w.Description); d != "" {
		lines = append(lines, pane.Paragraph(th, "Description", d, width)...)
	}
	return lines
}

func mounts(c *deps.Deps, w *cairn.Workspace) string {
	n, ok := c.Data.Store().Mounts(w.ID)
	switch {
	case w.VolumeState != cairn.VolumeReady:
		return "none (no volume)"
	case !ok || n < 0:
		return "unknown"
	case n == 0:
		return "none"
	case n == 1:
		return "1 running container"
	}
	return fmt.Sprintf("%d running containers", n)
}

func artifacts(c *deps.Deps, w *cairn.Workspace) string {
	n, ok := c.Data.Store().Counts(w.ID)
	if !ok {
		return c.Theme.Glyphs.Dash
	}
	text := termkit.Count(n.Total())
	if n.Missing > 0 {
		text += " " + c.Theme.Glyphs.Dot + " " + c.Theme.Bad.Render(c.Theme.Glyphs.Missing+" "+termkit.Count(n.Missing)+" missing")
	}
	return text
}
