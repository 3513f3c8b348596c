package transfers

import (
	"fmt"

	"github.com/charmbracelet/lipgloss"

	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

func columns(c *deps.Deps) []table.Column[*row] {
	th := c.Theme
	return []table.Column[*row]{
		{Title: " ", Min: 1, Cell: func(r *row) string { return transfer.Arrow(th, r.t) }},
		{Title: "NAME", Min: 12, Max: 32, Flex: true, Fit: true, Cell: func(r *row) string { return r.name }},
		{Title: "PHASE", Min: 13, Cell: func(r *row) string { return transfer.PhaseWord(th, r.t, c.Data.Frame()) },
			Style: func(r *row) (lipgloss.Style, bool) {
				switch r.t.Phase {
				case transfer.PhaseFailed:
					return th.Bad, true
				case transfer.PhaseDone:
					return th.Good, true
				}
				return th.Pending, !r.t.Phase.Finished()
			}},
		{Title: "PROGRESS", Min: 17, Drop: 3, Cell: func(r *row) string { return transfer.Bar(th, r.t, 12) }},
		{Title: "BYTES", Min: 21, Right: true, Drop: 4, Cell: func(r *row) string { return bytes(r.t) }},
		{Title: "PARTS", Min: 7, Right: true, Drop: 1, Cell: func(r *row) string { return parts(r.t) }},
		{Title: "RATE", Min: 11, Right: true, Drop: 2, Cell: func(r *row) string { return rate(c, r.t) }},
		{Title: "TIME", Min: 8, Right: true, Drop: 5, Cell: func(r *row) string { return timeCell(c, r.t) }},
		{Title: "PATH", Min: 12, Flex: true, Drop: 1, Cell: func(r *row) string { return r.path }},
	}
}

func bytes(t *transfer.Transfer) string {
	if t.Total <= 0 && t.Done == 0 {
		return ""
	}
	if t.Phase == transfer.PhaseDone {
		return termkit.Size(t.Total)
	}
	return termkit.Size(t.Done) + " / " + termkit.Size(t.Total)
}

// parts is a transfer cut in parts' count, also once it ended.
func parts(t *transfer.Transfer) string {
	if t.PartsTotal == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", t.Parts, t.PartsTotal)
}

func rate(c *deps.Deps, t *transfer.Transfer) string {
	if t.Rate <= 0 || t.Phase == transfer.PhaseQueued {
		return c.Theme.Glyphs.Dash
	}
	return transfer.Rate(t.Rate)
}

// timeCell is the ETA while bytes move, else the duration.
func timeCell(c *deps.Deps, t *transfer.Transfer) string {
	if d, ok := t.ETA(); ok && t.Phase.Running() {
		return "ETA " + transfer.Short(d)
	}
	if t.Started.IsZero() {
		return c.Theme.Glyphs.Dash
	}
	return transfer.Short(t.Duration(c.Data.Now()))
}

// View draws the list and the detail pane.
func (s *Screen) View() string {
	return s.list.View("", "No transfers yet — u uploads, d downloads (on an artifacts screen).", s.detail())
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	t, ok := s.Selected()
	if !ok {
		return nil
	}
	return Detail(s.c, t, s.list.DetailWidth())
}

// Detail renders a transfer's detail lines for width.
func Detail(c *deps.Deps, t *transfer.Transfer, width int) []string {
	th := c.Theme
	now := c.Data.Now()
	kind := map[transfer.Kind]string{transfer.Upload: "upload", transfer.Replace: "replace content", transfer.Download: "download"}[t.Kind]
	lines := []string{
		" " + th.Bold.Render(transfer.Arrow(th, t)+" "+termkit.Sanitize(t.Name)),
		pane.Field(th, "Kind", kind),
		pane.Field(th, "Phase", transfer.PhaseWord(th, t, c.Data.Frame())),
		pane.Field(th, "Local path", termkit.Sanitize(t.Path)),
		pane.Field(th, "Bytes", bytes(t)),
		pane.Field(th, "Rate", rate(c, t)),
	}
	if t.PartsTotal > 0 {
		lines = append(lines, pane.Field(th, "Parts", fmt.Sprintf("%d of %d complete", t.Parts, t.PartsTotal)))
	}
	if !t.Started.IsZero() {
		lines = append(lines, pane.Field(th, "Started", pane.Stamped(now, t.Started)),
			pane.Field(th, "Duration", transfer.Short(t.Duration(now))))
	}
	if t.ArtifactID != "" {
		lines = append(lines, pane.Field(th, "Artifact", t.ArtifactID))
	}
	if t.Err != "" {
		lines = append(lines, pane.Paragraph(th, "Error", t.Err, width)...)
	}
	return lines
}
