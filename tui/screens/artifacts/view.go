package artifacts

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/optional"
	"github.com/cairn-dev/cairn/tui/screens/pane"
	"github.com/cairn-dev/cairn/tui/store"
	"github.com/cairn-dev/cairn/tui/theme"
)

// Crumbs is the workspace, then "artifacts (1 204 · 3 missing)" with the
// missing-only mark and the filter.
func (s *Screen) Crumbs() []string {
	dot := " " + s.c.Theme.Glyphs.Dot + " "
	crumb := "artifacts (" + termkit.Count(int64(s.list.Table.Total()))
	if n := s.missingCount(); n > 0 {
		crumb += dot + termkit.Count(int64(n)) + " missing"
	}
	crumb += ")"
	if st := s.c.Data.List(store.Artifacts(s.wsID)); st.Loading {
		crumb = "artifacts (loading " + termkit.Count(int64(st.Loaded)) + "…)"
	}
	if s.missingOnly {
		crumb += " [missing]"
	}
	return s.list.Crumbs(s.wsName, crumb)
}

func (s *Screen) missingCount() int {
	if n, ok := s.c.Data.Store().Counts(s.wsID); ok && !s.deleted {
		return int(n.Missing)
	}
	return 0
}

// Keys is the navigation and artifact bindings with their state.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "artifacts", map[keys.ID]pane.Help{
		keys.Open: {Short: "preview", Long: "preview the content"},
	}, keys.ScopeNav, keys.ScopeLists, keys.ScopeArtifacts)
	a, ok := s.Selected()
	switch {
	case s.deleted:
		for _, id := range []keys.ID{keys.ArtEdit, keys.ArtDelete, keys.MissingOnly, keys.Filter, keys.SortNext, keys.SortReverse,
			keys.Open, keys.Preview, keys.ArtUpload, keys.ArtReplace, keys.ArtDownload, keys.VolLoad, keys.VolUpdate,
			keys.Shell, keys.VolSave, keys.WsSweep, keys.Files, keys.Snapshots, keys.Mark, keys.MarkAll} {
			ctx.Disable(id, "workspace deleted")
		}
	case !ok:
		for _, id := range []keys.ID{keys.CopyName, keys.CopyID, keys.ArtEdit, keys.ArtDelete, keys.Open, keys.Preview,
			keys.ArtReplace, keys.ArtDownload, keys.VolLoad, keys.VolUpdate, keys.Mark, keys.MarkAll} {
			ctx.Disable(id, "no artifact selected")
		}
	default:
		s.guard(ctx, a)
	}
	s.guardVolume(ctx)
	s.list.Restrict(ctx)
	if s.c.Remote {
		ctx.Hide(keys.ArtUpload, keys.ArtReplace, keys.ArtDownload)
	}
	if !s.deleted {
		s.list.BulkKeys(ctx)
	}
	return ctx
}

// guard disables what the artifact's state forbids.
func (s *Screen) guard(ctx keys.Context, a *cairn.Artifact) {
	if p := s.c.Data.Pending(a.ID); p != "" {
		for _, id := range []keys.ID{keys.ArtEdit, keys.ArtDelete, keys.ArtReplace, keys.VolUpdate, keys.VolLoad, keys.ArtDownload} {
			ctx.Disable(id, "busy: "+p)
		}
	}
	if missing(a) {
		ctx.Disable(keys.Open, "no object to preview — U to replace")
		ctx.Disable(keys.Preview, "no object to preview — U to replace")
		name := termkit.Sanitize(a.Name)
		ctx.Disable(keys.ArtDownload, name+" is MISSING_OBJECT — nothing to download")
		ctx.Disable(keys.VolLoad, name+" is MISSING_OBJECT — nothing to load")
	}
}

// guardVolume disables what needs the workspace's volume READY.
func (s *Screen) guardVolume(ctx keys.Context) {
	w, ok := s.c.Data.Store().Workspace(s.wsID)
	if !ok || w.VolumeState != cairn.VolumeReady {
		for _, id := range []keys.ID{keys.VolSave, keys.VolLoad, keys.VolUpdate} {
			ctx.Disable(id, "needs volume READY — v provisions it")
		}
		ctx.Disable(keys.Shell, "shell needs volume READY — v provisions it")
		ctx.Disable(keys.Files, "files need volume READY — v provisions it")
		return
	}
	if p := s.c.Data.Pending(w.ID); p != "" {
		ctx.Disable(keys.Shell, "busy: "+p)
		ctx.Disable(keys.Files, "busy: "+p)
	}
	if r := s.c.Data.ShellBlocked(); r != "" {
		ctx.Disable(keys.Shell, r)
	}
}

// View draws the list and the detail pane.
func (s *Screen) View() string {
	banner := ""
	if s.deleted {
		banner = "workspace deleted — only back and copy remain"
	} else if w, ok := s.c.Data.Store().Workspace(s.wsID); ok {
		// Shells, loads and unloads would be refused: say so before.
		banner = pane.VolumeIssue(w)
	}
	return s.list.View(banner, s.empty(), s.detail())
}

func (s *Screen) empty() string {
	if s.list.Table.Total() > 0 {
		if s.missingOnly && s.list.Table.Len() == 0 {
			return "no MISSING_OBJECT artifacts — m shows all"
		}
		return "no artifact matches the filter — esc clears it"
	}
	st := s.c.Data.List(store.Artifacts(s.wsID))
	switch {
	case st.Err != nil:
		return pane.Failure(s.c, "artifacts", st)
	case !s.c.Data.Store().Cached(s.wsID) && !s.deleted:
		return "loading artifacts…"
	}
	return "No artifacts in " + s.wsName + " yet."
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	a, ok := s.Selected()
	if !ok {
		return nil
	}
	return Detail(s.c, a, s.list.DetailWidth())
}

// Detail renders an artifact's detail lines for width.
func Detail(c *deps.Deps, a *cairn.Artifact, width int) []string {
	th := c.Theme
	now := c.Data.Now()
	state := stateCell(c, a)
	if missing(a) {
		state = th.Bad.Render(state)
	}
	lines := []string{
		" " + th.Bold.Render(termkit.Sanitize(a.Name)),
		pane.Field(th, "ID", a.ID),
		pane.Field(th, "State", state),
	}
	if missing(a) {
		gone := "the object is gone from the store"
		if !c.Config.ReadOnly {
			gone += " — U uploads new content"
		}
		for _, l := range strings.Split(theme.Wrap(gone, max(1, width-14)), "\n") {
			lines = append(lines, pane.Field(th, "", l))
		}
	}
	lines = append(lines,
		pane.Field(th, "Size", termkit.Size(a.Size)+" ("+termkit.Count(a.Size)+" bytes)"),
		pane.Field(th, "MIME", termkit.Sanitize(a.MIMEType)),
		pane.Field(th, "Object key", termkit.Sanitize(a.ObjectKey)),
		pane.Field(th, "Created", pane.Stamped(now, a.CreatedAt)),
		pane.Field(th, "Updated", pane.Stamped(now, a.UpdatedAt)),
	)
	if d := optional.String(a.Description); d != "" {
		lines = append(lines, pane.Paragraph(th, "Description", d, width)...)
	}
	return append(lines, head(c, a, width)...)
}

// headLines is how many lines of a small text artifact the detail pane
// shows.
const headLines = 12

// head is the first lines of a small text artifact, once read; the
// preview shows all of it.
func head(c *deps.Deps, a *cairn.Artifact, width int) []string {
	if !c.Inlined(a) {
		return nil
	}
	th := c.Theme
	text, ok := c.Data.Head(a.ID, a.UpdatedAt)
	if !ok {
		return []string{"", " " + th.Label.Render("Content"), " " + th.Dim.Render("reading"+th.Glyphs.Ellipsis)}
	}
	lines := []string{"", " " + th.Label.Render("Content")}
	for i, l := range text {
		if i == headLines {
			lines = append(lines, " "+th.Dim.Render(th.Glyphs.Ellipsis+" p previews all"))
			break
		}
		lines = append(lines, " "+ansi.Truncate(l, max(1, width-2), th.Glyphs.Ellipsis))
	}
	return lines
}
