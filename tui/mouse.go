package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/screen"
)

// onMouse is a mouse event, only with mouse: true (off by default, since
// it takes the terminal's text selection): the wheel moves as the arrow
// keys do, in the modal when one is open; a left click in the body puts
// the cursor on the row under it.
func (m *Model) onMouse(msg tea.MouseMsg) tea.Cmd {
	var key tea.KeyMsg
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		key = tea.KeyMsg{Type: tea.KeyUp}
	case tea.MouseButtonWheelDown:
		key = tea.KeyMsg{Type: tea.KeyDown}
	case tea.MouseButtonLeft:
		if msg.Action != tea.MouseActionPress || m.modal != nil || m.tooSmall() {
			return nil
		}
		y := msg.Y - 1 // under the header line
		if y < 0 || y >= m.bodyHeight() {
			return nil
		}
		return m.stack.ToTop(screen.ClickMsg{X: msg.X, Y: y})
	default:
		return nil
	}
	if msg.Action != tea.MouseActionPress {
		return nil
	}
	return m.onKey(key)
}
