package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/keys"
)

// lifecycleWarnings raises a batch's lifecycle warnings as toasts (the
// board's Lifecycle), after the batch's events were applied: a workspace
// deleted meanwhile is not warned of.
func (m *Model) lifecycleWarnings(evs []cairn.Event) tea.Cmd {
	kept := make([]cairn.Event, 0, len(evs))
	for _, ev := range evs {
		if id := ev.WorkspaceOf(); id == "" || !m.sh.st.Deleted(id) {
			kept = append(kept, ev)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return m.notes.Lifecycle(kept, m.touchKey())
}

// touchKey is the key that touches a workspace, for the warnings' hint;
// "" in read-only mode.
func (m *Model) touchKey() string {
	if m.c.Config.ReadOnly {
		return ""
	}
	return m.c.Keys.Action(keys.WsTouch).FirstKey()
}
