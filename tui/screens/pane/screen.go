package pane

import (
	"cmp"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/table"
)

// The skeleton every list screen has in common: its table, its crumbs,
// the esc that leaves it, and the bindings it offers.

// NewTable is a list screen's table: rows keyed by id, in cols, drawn in
// the theme's styles and glyphs.
func NewTable[T any](th *theme.Theme, id func(T) string, cols []table.Column[T]) *table.Model[T] {
	return table.New(id, cols, table.Styles{
		Header: th.ColumnHeader, Selected: th.Selected, Changed: th.Changed,
		Cursor: th.Glyphs.Cursor, ChangedGlyph: th.Glyphs.Changed, MarkGlyph: th.Glyphs.Mark,
		Ellipsis: th.Glyphs.Ellipsis,
	})
}

// Crumbs is a list screen's breadcrumbs: crumb ("audit (12)") with the
// filter and the marks after it, behind the name of the workspace the
// screen is scoped to (none when scope is "").
func (l *List[T]) Crumbs(scope, crumb string) []string {
	for _, f := range []string{l.FilterCrumb(), l.MarkCrumb()} {
		if f != "" {
			crumb += " " + f
		}
	}
	if scope == "" {
		return []string{crumb}
	}
	return []string{scope, crumb}
}

// Back is esc reaching a list screen: it clears the marks, else the
// filter, else asks the root to pop the screen.
func (l *List[T]) Back() tea.Cmd {
	if l.ClearMarks() || l.ClearFilter() {
		return nil
	}
	return screen.Send(screen.NavMsg{Kind: screen.NavPop})
}

// Help is a screen's own hint word and help line for an action, where the
// registry's would not say what it does here; "" keeps the registry's.
type Help struct{ Short, Long string }

// Bindings is the context named name: the actions of scopes, all enabled,
// with help's words in place of the registry's for the actions it names.
func Bindings(km *keys.Map, name string, help map[keys.ID]Help, scopes ...keys.Scope) keys.Context {
	ctx := keys.Context{Name: name}
	for _, sc := range scopes {
		ctx.Bindings = append(ctx.Bindings, km.Enabled(sc)...)
	}
	for i := range ctx.Bindings {
		b := &ctx.Bindings[i]
		if h, ok := help[b.ID]; ok {
			b.Short = cmp.Or(h.Short, b.Short)
			b.Help = cmp.Or(h.Long, b.Help)
		}
	}
	return ctx
}

// Restrict disables what no list screen offers at the moment: zoom while
// list and detail do not share the body, and every change in read-only
// mode.
func (l *List[T]) Restrict(ctx keys.Context) {
	if !l.Split() {
		ctx.Disable(keys.Zoom, "nothing to zoom at this width")
	}
	if l.C.Config.ReadOnly {
		ctx.ReadOnly()
	}
}

// Rows is a row built by newRow for each of items, in order.
func Rows[I, T any](items []I, newRow func(I) T) []T {
	rows := make([]T, len(items))
	for i, it := range items {
		rows[i] = newRow(it)
	}
	return rows
}
