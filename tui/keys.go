package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/transfers"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// onKey routes a key by mode, first match wins: modal → focused input →
// global → active screen.
func (m *Model) onKey(k tea.KeyMsg) tea.Cmd {
	if k.Type == tea.KeyRunes && len(k.Runes) > 1 && !k.Paste {
		return m.eachRune(k)
	}
	if m.modal != nil {
		return m.modalKey(k)
	}
	if m.tooSmall() {
		if k.String() == "q" || k.String() == "ctrl+c" {
			return m.quit()
		}
		return nil
	}
	if m.stack.Top().Capturing() {
		if k.String() == "ctrl+c" {
			return m.quit()
		}
		return m.stack.ToTop(k)
	}
	if cmd, ok := m.trayFocus(k); ok {
		return cmd
	}
	if id, ok := m.c.Keys.Lookup(keys.ScopeGlobal, k.String()); ok {
		return m.global(id)
	}
	return m.stack.ToTop(k)
}

// trayFocus moves the keys into and out of the transfers tray: tab past
// the detail pane (shift+tab past the list) enters it; there the tray
// takes movement, x and esc, and tab leaves it through the screen's panes.
// ok is false when the key is not the tray's.
func (m *Model) trayFocus(k tea.KeyMsg) (tea.Cmd, bool) {
	id, ok := m.c.Keys.Lookup(keys.ScopeNav, k.String())
	if !ok {
		id, ok = m.c.Keys.Lookup(keys.ScopeTransfers, k.String())
	}
	if !ok {
		id, _ = m.c.Keys.Lookup(keys.ScopeGlobal, k.String())
	}
	if m.xfer.TrayFocused() {
		cmd, taken := m.xfer.TrayKey(id)
		p, hasPanes := m.stack.Top().(interface{ DetailFocused() bool })
		// Back into the panes: the list after tab, the detail after shift+tab.
		if hasPanes && (id == keys.FocusNext && p.DetailFocused() || id == keys.FocusPrev && !p.DetailFocused()) {
			return m.stack.ToTop(k), true
		}
		return cmd, taken
	}
	p, hasPanes := m.stack.Top().(interface{ DetailFocused() bool })
	switch {
	case !hasPanes || m.trayRows == 0:
		return nil, false
	case id == keys.FocusNext && p.DetailFocused(), id == keys.FocusPrev && !p.DetailFocused():
		return nil, m.xfer.FocusTray()
	}
	return nil, false
}

// eachRune handles keys that arrived in one read (a fast typist, key
// repeat, a laggy SSH link) one by one, as if typed apart: Bubble Tea
// reports them as one message, which would match no binding, and the
// first may change where the rest go (n opens a form that takes the rest).
func (m *Model) eachRune(k tea.KeyMsg) tea.Cmd {
	cmds := make([]tea.Cmd, 0, len(k.Runes))
	for _, r := range k.Runes {
		cmds = append(cmds, m.onKey(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: k.Alt}))
	}
	return tea.Batch(cmds...)
}

// modalKey gives the key to the modal; ctrl+c first closes it.
func (m *Model) modalKey(k tea.KeyMsg) tea.Cmd {
	if k.String() == "ctrl+c" {
		m.closeModal()
		return nil
	}
	var cmd tea.Cmd
	m.modal, cmd = m.modal.Update(k)
	return tea.Batch(cmd, m.settleModal())
}

func (m *Model) global(id keys.ID) tea.Cmd {
	switch id {
	case keys.Help:
		m.openModal(helpModal(m.c.Theme, m.stack.Top().Keys(), m.globalKeys()), ownedByRoot)
	case keys.Messages:
		m.openModal(m.notes.Log(m.c.Theme), ownedByRoot)
	case keys.Back:
		if m.shell.CancelDial() {
			return m.notes.Show(toast.LevelInfo, "cancelled the shell")
		}
		if m.notes.Toasts().DismissError() {
			return nil
		}
		return m.stack.ToTop(screen.BackMsg{})
	case keys.QuitOrBack:
		if m.stack.Depth() > 1 {
			return m.stack.Pop(m.stack.Depth() - 1)
		}
		return m.quit()
	case keys.Quit:
		return m.quit()
	case keys.Refresh:
		return tea.Batch(m.feed.Refresh(), m.stack.ToTop(screen.RefreshMsg{}))
	case keys.Jump1:
		return m.stack.Pop(1)
	case keys.Jump2:
		if ws := m.stack.JumpArtifacts(); ws != "" {
			return m.openArtifacts(ws)
		}
	case keys.Jump3, keys.Transfers:
		m.stack.OpenTransfers()
	case keys.Suspend:
		return tea.Suspend
	case keys.Palette:
		m.openPalette("")
	case keys.AllShells:
		return m.openShells("")
	case keys.AllAudit:
		return m.openAudit("")
	case keys.Contexts:
		m.openPalette("ctx ")
	}
	return nil
}

// quit ends the program, asking first while transfers run (quitting
// cancels them) or with confirm_quit.
func (m *Model) quit() tea.Cmd {
	if n := m.xfer.Active(); n > 0 && !m.quitting {
		text := fmt.Sprintf("%d transfers running — quit and cancel them?", n)
		if n == 1 {
			text = "1 transfer running — quit and cancel it?"
		}
		m.openModal(confirm.New(m.c.Theme, "Quit", text), ownedByQuit)
		return nil
	}
	if m.c.Config.ConfirmQuit && !m.quitting {
		m.openModal(confirm.New(m.c.Theme, "Quit", "Quit cairn-tui?"), ownedByQuit)
		return nil
	}
	m.quitting = true
	return tea.Quit
}

// onFetch is a rested cursor on a workspace: fetch its detail and, after
// the longer rest, prefetch its artifacts.
func (m *Model) onFetch(f screen.FetchMsg) tea.Cmd {
	if !f.Prefetch {
		return m.feed.Select(f.WorkspaceID)
	}
	return m.feed.Open(f.WorkspaceID, feed.OriginPrefetch)
}

// onTransferAction is x, c or enter on the transfers screen.
func (m *Model) onTransferAction(a transfers.ActionMsg) tea.Cmd {
	switch a.ID {
	case keys.TrClear:
		return m.xfer.ClearFinished()
	case keys.TrCancel:
		return m.act.AskCancel(a.Transfer)
	case keys.Open:
		return m.goToArtifact(a.Transfer)
	}
	return nil
}

// goToArtifact opens the artifacts of a transfer's workspace with the
// cursor on its artifact.
func (m *Model) goToArtifact(id int) tea.Cmd {
	t := m.xfer.Get(id)
	if t == nil || t.ArtifactID == "" {
		return nil
	}
	if _, ok := m.sh.st.Workspace(t.WorkspaceID); !ok {
		return m.notes.Show(toast.LevelInfo, "the workspace is gone")
	}
	m.stack.Pop(1)
	cmd := m.openArtifacts(t.WorkspaceID)
	m.stack.Select(t.ArtifactID)
	return cmd
}

// navigate pushes or pops screens.
func (m *Model) navigate(n screen.NavMsg) tea.Cmd {
	switch {
	case n.Kind == screen.NavPop:
		return m.stack.Pop(m.stack.Depth() - 1)
	case n.WorkspaceID != "":
		return m.openArtifacts(n.WorkspaceID)
	}
	return nil
}

// openArtifacts pushes a workspace's artifacts, listing them when not
// cached.
func (m *Model) openArtifacts(wsID string) tea.Cmd {
	return tea.Batch(m.stack.OpenArtifacts(wsID), m.feed.Open(wsID, feed.OriginFirst))
}
