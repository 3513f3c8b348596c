package audit

import (
	"slices"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screens/pane"
)

// forbiddenText is the body without the admin scope.
const forbiddenText = "the audit trail needs the admin scope — this token lacks it"

// Crumbs is "audit (12)" ("+" while more remain), with the type shown
// and the filter, after the workspace's name when the screen shows one.
func (s *Screen) Crumbs() []string {
	crumb := "audit"
	if t := s.Type(); t != "" {
		crumb += " " + string(t)
	}
	if s.pages.Listed() {
		crumb += " (" + s.pages.Count() + ")"
	}
	return s.list.Crumbs(s.wsName, crumb) // wsName is "" for every workspace
}

// Keys is the navigation and audit bindings with their state for the row
// under the cursor.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "audit", map[keys.ID]pane.Help{
		keys.Filter:   {Long: "filter the loaded events by type, actor, request ID or summary; enter keeps, esc clears"},
		keys.CopyName: {Short: "copy request ID", Long: "copy the event's request ID"},
		keys.CopyID:   {Long: "copy the event's ID"},
	}, keys.ScopeNav, keys.ScopeAudit)
	ctx.Disable(keys.Open, "an event has nothing to open — the detail pane shows all of it")
	ctx.Disable(keys.SortNext, "the trail is listed newest first")
	ctx.Disable(keys.SortReverse, "the trail is listed newest first")
	r, ok := s.list.Table.Cursor()
	switch {
	case !ok:
		ctx.Disable(keys.CopyName, "no event selected")
		ctx.Disable(keys.CopyID, "no event selected")
	case r.requestID == "":
		ctx.Disable(keys.CopyName, "this event records no request ID")
	}
	s.list.Restrict(ctx)
	return ctx
}

// View draws the banner, the list (or why there is none), the detail pane
// and the line saying more events remain.
func (s *Screen) View() string {
	return s.list.View(s.banner(), s.empty(), s.detail())
}

func (s *Screen) sentence() string {
	err := s.pages.Err()
	if forbidden(err) {
		return forbiddenText
	}
	return "cannot list the audit trail: " + errtext.Sentence(err, errtext.Subject{Workspace: s.wsName, Scope: "admin"})
}

func (s *Screen) banner() string {
	if s.pages.Err() != nil && s.pages.Listed() {
		return s.sentence() + " — r retries"
	}
	return ""
}

func (s *Screen) empty() string {
	switch {
	case s.list.Table.Total() > 0:
		return "no event matches the filter — esc clears it"
	case s.pages.Err() != nil:
		return s.sentence() + "\nr retries"
	case !s.pages.Listed():
		return "listing the audit trail" + s.c.Theme.Glyphs.Ellipsis
	}
	text := "No audit events"
	if t := s.Type(); t != "" {
		text += " of type " + string(t)
	}
	if s.wsID != "" {
		text += " for " + s.wsName
	}
	if s.Type() != "" {
		text += " — T shows another type"
	}
	return text
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	ev, ok := s.Selected()
	if !ok {
		return nil
	}
	return Detail(s.c, ev, s.list.DetailWidth())
}

// Detail renders an event: its type, ID, time, actor, and every metadata
// key and value, each sanitised.
func Detail(c *deps.Deps, ev *cairn.AuditEvent, width int) []string {
	th := c.Theme
	actor := th.Glyphs.Dash + " (authentication off)"
	if ev.Actor != nil {
		actor = termkit.Sanitize(*ev.Actor)
	}
	lines := []string{
		" " + th.Bold.Render(termkit.Sanitize(string(ev.Type))),
		pane.Field(th, "ID", termkit.Sanitize(ev.ID)),
		pane.Field(th, "Time", pane.Stamped(c.Data.Now(), ev.CreatedAt)),
		pane.Field(th, "Actor", actor),
	}
	if id := text(ev.Metadata[keyWorkspace]); id != "" {
		lines = append(lines, pane.Field(th, "Workspace", workspaceName(c, id)))
	}
	keys := make([]string, 0, len(ev.Metadata))
	for k := range ev.Metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		lines = append(lines, "", " "+th.Label.Render("Metadata"))
	}
	for _, k := range keys {
		lines = append(lines, metaLines(c, k, text(ev.Metadata[k]), width)...)
	}
	return lines
}

// metaLines is one metadata key and its value: on one line when it fits,
// else the key with the value wrapped under it.
func metaLines(c *deps.Deps, key, value string, width int) []string {
	k, v := termkit.Sanitize(key), termkit.Sanitize(value)
	if len([]rune(k)) < 12 && 1+12+len([]rune(v)) <= width {
		return []string{pane.Field(c.Theme, k, v)}
	}
	return pane.Paragraph(c.Theme, k, value, width)[1:]
}
