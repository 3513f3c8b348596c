package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screens/audit"
	"github.com/cairn-dev/cairn/tui/screens/shells"
)

// listShells runs a shells screen's request.
func (m *Model) listShells(r shells.ListMsg) tea.Cmd {
	b, ctx := m.backend, m.connCtx
	return func() tea.Msg {
		l, err := b.FindShells(ctx, r.WorkspaceID)
		return shells.ListedMsg{Screen: r.Screen, Req: r.Req, List: l, Err: err}
	}
}

// listAudit runs an audit screen's request for one page.
func (m *Model) listAudit(r audit.ListMsg) tea.Cmd {
	b, ctx := m.backend, m.connCtx
	return func() tea.Msg {
		evs, err := b.FindAuditEvents(ctx, r.Filter())
		return audit.PageMsg{Screen: r.Screen, Req: r.Req, Offset: r.Offset, Events: evs, Err: err}
	}
}
