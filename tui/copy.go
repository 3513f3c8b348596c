package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

func (m *Model) wsName(id string) string {
	if w, ok := m.sh.st.Workspace(id); ok {
		return w.Name
	}
	return id
}

// copyCmd writes the value to the clipboard in a Cmd.
func copyCmd(ctx context.Context, clip Clipboard, c screen.CopyMsg) tea.Cmd {
	return func() tea.Msg {
		return copyDoneMsg{label: c.Label, value: c.Value, err: clip.Copy(ctx, c.Value)}
	}
}

func (m *Model) onCopied(c copyDoneMsg) tea.Cmd {
	if c.err != nil {
		return m.notes.Show(toast.LevelError, "copy failed: "+c.err.Error())
	}
	return m.notes.Show(toast.LevelOK, "copied "+c.label+" "+c.value)
}
