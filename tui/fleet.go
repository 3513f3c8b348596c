package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/ptyshell"
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

// reopenShell attaches to (or watches) a shell from the shells screen, at
// the size a new shell would get.
func (m *Model) reopenShell(o shells.OpenMsg) tea.Cmd {
	return m.shell.Reopen(o.ShellID, o.WorkspaceID, m.wsName(o.WorkspaceID), ptyshell.Size{Cols: max(1, m.width), Rows: max(1, m.height)})
}
