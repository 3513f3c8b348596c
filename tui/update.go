package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/audit"
	"github.com/cairn-dev/cairn/tui/screens/files"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/screens/shells"
	"github.com/cairn-dev/cairn/tui/screens/snapshots"
	"github.com/cairn-dev/cairn/tui/screens/transfers"
	"github.com/cairn-dev/cairn/tui/transfer"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// Update applies one message. It does no I/O: every request, timer and
// clipboard write is a returned Cmd.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.update(msg)
	return m, tea.Batch(cmd, m.followFiles(), m.tick.schedule(m.wantTick(), m.c.After, m.clock))
}

func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyMsg:
		return m.onKey(msg)
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
	case tea.MouseMsg:
		return m.onMouse(msg)
	case hubMsg:
		return m.onHub(msg.batch)
	case tickMsg:
		if m.tick.fired(msg) {
			m.sh.now = msg.now
			m.feed.CheckOffline()
			return m.stack.Broadcast(screen.TimeMsg{})
		}
	case copyDoneMsg:
		return m.onCopied(msg)
	case filesStaleMsg:
		return m.onFilesStale(msg)
	case tea.ResumeMsg:
		return m.feed.Resync()
	case quitRequestMsg:
		return m.quit()
	case noLocalDiskMsg:
		m.openModal(m.noLocalDiskModal(), ownedByRoot)
		return nil
	case contextOpenedMsg:
		return m.onContextOpened(msg)
	case ops.DoneMsg:
		if msg.Op.ID < m.connSince {
			return nil // an answer of the previous context's server
		}
		cmd, _ := m.act.Update(msg)
		return cmd
	case ops.BulkDoneMsg:
		if msg.ID < m.connSince {
			return nil
		}
		cmd, _ := m.act.Update(msg)
		return cmd
	case preview.Msg:
		m.stack.Preview(msg)
	case form.CompletedMsg:
		if m.modal != nil {
			m.modal, _ = m.modal.Update(msg)
		}
	default:
		if cmd, ok := m.notes.Update(msg); ok {
			return cmd
		}
		if cmd, ok := m.act.Update(msg); ok {
			return cmd
		}
		if cmd, ok := m.feed.Update(msg); ok {
			return cmd
		}
		if cmd, ok := m.xfer.Update(msg); ok {
			return cmd
		}
		if cmd, ok := m.shell.Update(msg); ok {
			return cmd
		}
		return m.fromScreen(msg)
	}
	return nil
}

// fromScreen handles what screens ask of the root; anything else goes to
// the active screen.
func (m *Model) fromScreen(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case screen.NavMsg:
		return m.navigate(msg)
	case screen.ActionMsg:
		switch msg.ID {
		case keys.ShellsOf:
			return m.openShells(msg.WorkspaceID)
		case keys.AuditOf:
			return m.openAudit(msg.WorkspaceID)
		case keys.Snapshots:
			return m.openSnapshots(msg.WorkspaceID)
		}
		return m.act.Do(msg)
	case screen.CopyMsg:
		return copyCmd(m.ctx, m.clip, msg)
	case screen.ToastMsg:
		return m.notes.Show(msg.Level, msg.Text)
	case screen.FetchMsg:
		return m.onFetch(msg)
	case screen.HeadMsg:
		return m.feed.ReadHead(msg)
	case files.ListMsg:
		return m.listFiles(msg)
	case files.PageMsg:
		return m.stack.Files(msg)
	case shells.ListMsg:
		return m.listShells(msg)
	case shells.OpenMsg:
		return m.reopenShell(msg)
	case shells.KillMsg:
		return m.act.AskKill(msg.ShellID, msg.WorkspaceID, msg.Label)
	case audit.ListMsg:
		return m.listAudit(msg)
	case snapshots.ListMsg:
		return m.listSnapshots(msg)
	case snapshots.ListedMsg:
		return m.stack.Snapshots(msg)
	case snapshots.ActionMsg:
		return m.act.Snapshot(msg.ID, msg.WorkspaceID, msg.Snapshot)
	case transfers.ActionMsg:
		return m.onTransferAction(msg)
	case transfer.CancelMsg:
		return m.act.AskCancel(msg.ID)
	}
	return m.stack.ToTop(msg)
}

// resize lays out every region from the window size alone.
func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.trayRows = m.trayHeight()
	m.stack.SetSize(w, m.bodyHeight())
	if m.modal != nil {
		m.modal.SetSize(w, m.bodyHeight())
	}
}

// bodyHeight is the rows between the header and the tray, hint and status
// lines.
func (m *Model) bodyHeight() int { return max(1, m.height-3-m.trayRows) }

// tooSmall reports a window below the 60×16 minimum.
func (m *Model) tooSmall() bool { return m.width < 60 || m.height < 16 }
