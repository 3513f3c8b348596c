package shells

import (
	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screens/pane"
)

// Crumbs is "shells (3)" once listed ("shells" before), after the
// workspace's name when the screen shows one workspace, and the filter.
func (s *Screen) Crumbs() []string {
	crumb := "shells"
	if s.listed {
		crumb += " (" + termkit.Count(int64(len(s.shells))) + ")"
	}
	return s.list.Crumbs(s.wsName, crumb) // wsName is "" for every workspace
}

// Keys is the navigation and shells bindings with their state for the row
// under the cursor.
func (s *Screen) Keys() keys.Context {
	ctx := pane.Bindings(s.c.Keys, "shells", map[keys.ID]pane.Help{
		keys.Filter:   {Long: "filter by workspace, shell, container or token; enter keeps, esc clears"},
		keys.CopyName: {Short: "copy container", Long: "copy the shell's container"},
		keys.CopyID:   {Long: "copy the shell's ID"},
		keys.Open:     {Short: "attach", Long: "attach to the shell — as its writer if this TUI opened it, else watch it read-only"},
	}, keys.ScopeNav, keys.ScopeShells)
	ctx.Disable(keys.SortNext, "shells are listed oldest first")
	ctx.Disable(keys.SortReverse, "shells are listed oldest first")
	if _, ok := s.list.Table.Cursor(); !ok {
		for _, id := range []keys.ID{keys.ShellKill, keys.CopyName, keys.CopyID, keys.Open} {
			ctx.Disable(id, "no shell selected")
		}
	}
	s.list.Restrict(ctx)
	return ctx
}

// View draws the banner, the list (or why there is none) and the detail
// pane.
func (s *Screen) View() string {
	return s.list.View(s.banner(), s.empty(), s.detail())
}

func (s *Screen) banner() string {
	switch {
	case s.err != nil && s.listed:
		return "cannot list shells: " + s.sentence() + " — the last list shows; r retries"
	case s.listed && !s.enabled:
		return disabledText
	}
	return ""
}

const disabledText = "the server has the shell turned off (shell.enable)"

func (s *Screen) sentence() string {
	return errtext.Sentence(s.err, errtext.Subject{Workspace: s.wsName, Scope: "read"})
}

func (s *Screen) empty() string {
	switch {
	case s.list.Table.Total() > 0:
		return "no shell matches the filter — esc clears it"
	case s.err != nil:
		return "cannot list shells: " + s.sentence() + "\nr retries"
	case !s.listed:
		return "listing shells" + s.c.Theme.Glyphs.Ellipsis
	case !s.enabled:
		return disabledText + " — no shell can run."
	case s.wsID != "":
		return "No live shells on " + s.wsName
	}
	return "No live shells"
}

func (s *Screen) detail() []string {
	if s.list.DetailWidth() == 0 {
		return nil
	}
	sh, ok := s.Selected()
	if !ok {
		return nil
	}
	return Detail(s.c, sh)
}

// expires is the shell's end by its lifetime, a dash when not known.
func expires(dash string, sh *cairn.Shell) string {
	if sh.ExpiresAt.IsZero() {
		return dash
	}
	return sh.ExpiresAt.Local().Format("2006-01-02 15:04")
}

// Detail renders every field of a shell, each untrusted text sanitised.
func Detail(c *deps.Deps, sh *cairn.Shell) []string {
	th := c.Theme
	now := c.Data.Now()
	dash := th.Glyphs.Dash
	lines := []string{
		" " + th.Bold.Render("shell "+termkit.Sanitize(sh.ID)),
		pane.Field(th, "Workspace", workspaceName(c, sh.WorkspaceID)+" ("+termkit.Sanitize(sh.WorkspaceID)+")"),
		pane.Field(th, "Container", orDash(c, termkit.Sanitize(sh.Container))),
		pane.Field(th, "Replica", orDash(c, termkit.Sanitize(sh.Instance))),
		pane.Field(th, "State", orDash(c, termkit.Sanitize(sh.State))),
		pane.Field(th, "Started", pane.Stamped(now, sh.StartedAt)),
		pane.Field(th, "Expires", expires(dash, sh)),
		pane.Field(th, "Opened by", orDash(c, termkit.Sanitize(sh.TokenName))),
	}
	if !sh.Local {
		return append(lines, pane.Field(th, "Client", dash+" (another replica serves it)"),
			pane.Field(th, "Last input", dash+" (another replica serves it)"))
	}
	input := dash
	if sh.LastInputAt != nil {
		input = pane.Stamped(now, *sh.LastInputAt)
	}
	return append(lines, pane.Field(th, "Client", orDash(c, termkit.Sanitize(sh.ClientAddr))),
		pane.Field(th, "Last input", input))
}
