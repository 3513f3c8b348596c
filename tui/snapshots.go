package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/live"
	"github.com/cairn-dev/cairn/tui/screens/snapshots"
)

// openSnapshots pushes a workspace's snapshots.
func (m *Model) openSnapshots(wsID string) tea.Cmd {
	return m.stack.Push(snapshots.New(m.c, wsID, m.id()))
}

// listSnapshots runs a snapshots screen's request.
func (m *Model) listSnapshots(r snapshots.ListMsg) tea.Cmd {
	b, ctx := m.backend, m.connCtx
	return func() tea.Msg {
		list, err := b.ListSnapshots(ctx, r.WorkspaceID)
		return snapshots.ListedMsg{Screen: r.Screen, Req: r.Req, Snapshots: list, Err: err}
	}
}

// snapshotEvents tells the snapshots screens which workspaces' snapshots
// a batch's events changed — the store holds no snapshots, so they list
// again — and, after a resync, that any may have: what changed meanwhile
// was not seen.
func (m *Model) snapshotEvents(b live.Batch) tea.Cmd {
	if len(b.Resync) > 0 {
		return m.snapshotsChanged("")
	}
	seen := map[string]bool{}
	var cmds []tea.Cmd
	for _, ev := range b.Events {
		if ws := snapshotWorkspace(ev); ev.IsSnapshot() && !seen[ws] {
			seen[ws] = true
			cmds = append(cmds, m.snapshotsChanged(ws))
		}
	}
	return tea.Batch(cmds...)
}

// snapshotWorkspace is the workspace of a snapshot frame: a created one
// carries the snapshot, a deleted one the workspace's ID ("" when neither
// says, which every snapshots screen takes as its own).
func snapshotWorkspace(ev cairn.Event) string {
	if ev.Snapshot != nil {
		return ev.Snapshot.WorkspaceID
	}
	return ev.WorkspaceID
}

// snapshotsChanged tells the snapshots screens of workspace wsID ("" every
// one) to list again.
func (m *Model) snapshotsChanged(wsID string) tea.Cmd {
	return m.stack.Broadcast(snapshots.ChangedMsg{WorkspaceID: wsID})
}
