package action

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// AskKill asks before ending a live shell (admin scope; the server
// decides): whoever is in it sees it end as terminated.
func (act *Flow) AskKill(shellID, wsID, label string) tea.Cmd {
	if act.c.Config.ReadOnly {
		return act.host.Toast(toast.LevelInfo, "read-only mode")
	}
	act.openConfirm(intent{kind: intentKillShell, shellID: shellID, wsID: wsID, name: label}, "Kill shell",
		"End "+label+"? Its container is removed; whoever is in it sees the shell terminated.")
	return nil
}

// shellKilledMsg is KillShell's answer.
type shellKilledMsg struct {
	task        int
	label, wsID string
	err         error
}

func (act *Flow) killShell(in intent) tea.Cmd {
	task := act.host.NextID()
	act.ops.AddTask(task, "killing "+in.name+"…")
	b, ctx, id := act.backend, act.ctx, in.shellID
	return func() tea.Msg {
		return shellKilledMsg{task: task, label: in.name, wsID: in.wsID, err: b.KillShell(ctx, id)}
	}
}

// onShellKilled says how the kill went; the shells screens (and the files
// panes of the workspace, whose volume the shell may have written) list
// again.
func (act *Flow) onShellKilled(m shellKilledMsg) tea.Cmd {
	act.ops.EndTask(m.task)
	if m.err != nil {
		return tea.Batch(act.host.ErrorToast("cannot kill "+m.label+": "+errtext.Sentence(m.err, errtext.Subject{Scope: "admin"}), m.err),
			act.host.VolumeChanged(m.wsID, ""))
	}
	return tea.Batch(act.host.Toast(toast.LevelOK, "killed "+m.label), act.host.VolumeChanged(m.wsID, ""))
}
