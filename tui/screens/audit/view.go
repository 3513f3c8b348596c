package audit

import (
	"fmt"
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
	if s.listed {
		count := termkit.Count(int64(s.loaded))
		if s.more {
			count += "+"
		}
		crumb += " (" + count + ")"
	}
	if f := s.list.FilterCrumb(); f != "" {
		crumb += " " + f
	}
	if s.wsID == "" {
		return []string{crumb}
	}
	return []string{s.wsName, crumb}
}

// Keys is the navigation and audit bindings with their state for the row
// under the cursor.
func (s *Screen) Keys() keys.Context {
	km := s.c.Keys
	ctx := keys.Context{Name: "audit", Bindings: append(km.Enabled(keys.ScopeNav), km.Enabled(keys.ScopeAudit)...)}
	for i := range ctx.Bindings {
		b := &ctx.Bindings[i]
		switch b.ID {
		case keys.Filter:
			b.Help = "filter the loaded events by type, actor, request ID or summary; enter keeps, esc clears"
		case keys.CopyName:
			b.Short, b.Help = "copy request ID", "copy the event's request ID"
		case keys.CopyID:
			b.Help = "copy the event's ID"
		}
	}
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
	if !s.list.Split() {
		ctx.Disable(keys.Zoom, "nothing to zoom at this width")
	}
	if s.c.Config.ReadOnly {
		ctx.ReadOnly()
	}
	return ctx
}

// View draws the banner, the list (or why there is none), the detail pane
// and the line saying more events remain.
func (s *Screen) View() string {
	return s.list.View(s.banner(), s.empty(), s.detail())
}

func (s *Screen) sentence() string {
	if forbidden(s.err) {
		return forbiddenText
	}
	return "cannot list the audit trail: " + errtext.Sentence(s.err, errtext.Subject{Workspace: s.wsName, Scope: "admin"})
}

func (s *Screen) banner() string {
	if s.err != nil && s.listed {
		return s.sentence() + " — r retries"
	}
	return ""
}

func (s *Screen) empty() string {
	switch {
	case s.list.Table.Total() > 0:
		return "no event matches the filter — esc clears it"
	case s.err != nil:
		return s.sentence() + "\nr retries"
	case !s.listed:
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

// footer is the line under the list while more events remain.
func (s *Screen) footer() string {
	e := s.c.Theme.Glyphs.Ellipsis
	switch {
	case !s.more:
		return ""
	case s.loaded >= MaxEvents:
		return fmt.Sprintf("%s only the newest %s events are held here — T narrows to one type", e, termkit.Count(MaxEvents))
	case s.loading:
		return fmt.Sprintf("%s listing more (%s so far)%s", e, termkit.Count(int64(s.loaded)), e)
	}
	return fmt.Sprintf("%s more events: moving down lists the next %s", e, termkit.Count(PageSize))
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
