package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/help"
	"github.com/cairn-dev/cairn/tui/widgets/palette"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// helpModal lists the bindings: global, navigation, this screen (ctx),
// modals.
func helpModal(th *theme.Theme, ctx keys.Context, global []keys.State) screen.Modal {
	var nav, screen []keys.State
	for _, b := range ctx.Bindings {
		if b.Scope == keys.ScopeNav {
			nav = append(nav, b)
		} else {
			screen = append(screen, b)
		}
	}
	lines := help.Lines(th, []help.Group{
		{Title: "Global", Bindings: global},
		{Title: "Navigation", Bindings: nav},
		{Title: "This screen (" + ctx.Name + ")", Bindings: screen},
	})
	lines = append(lines, "", th.Bold.Render("Commands (:)"))
	for _, c := range palette.Commands() {
		lines = append(lines, fmt.Sprintf("%-17s %s", ":"+c.Usage(), c.Help))
	}
	lines = append(lines, "", th.Bold.Render("Modals"),
		"(y/N)         only y confirms; any other key cancels",
		"typed         the exact name, then enter; esc cancels",
		"forms         tab/shift+tab or down/up between fields; space toggles; enter submits; esc cancels",
		"path fields   tab completes a local path, or a volume path from the volume's listing (the longest",
		"              common prefix, or the candidates); ~ is home",
		"pickers       type to filter; up/down select; enter picks; esc cancels",
		"busy forms    esc closes the form; the operation goes on and its result is a toast",
		"resume offer  at start: r resumes the interrupted uploads, D discards them, esc asks again next start",
		"", th.Dim.Render("y/Y copy with OSC 52; in tmux it needs set-clipboard on."))
	return help.New(th, "Help", lines)
}

// globalKeys is the global context with its state.
func (m *Model) globalKeys() []keys.State {
	ctx := keys.Context{Name: "global", Bindings: m.c.Keys.Enabled(keys.ScopeGlobal)}
	if _, ok := m.stack.Selected(); m.stack.Depth() == 1 && !ok {
		ctx.Disable(keys.Jump2, "no workspace selected")
	}
	return ctx.Bindings
}

// modalOwner says who settles the open modal.
type modalOwner uint8

const (
	ownedByFlow    modalOwner = iota // an action's confirmation or form
	ownedByRoot                      // help, the messages log
	ownedByQuit                      // the quit confirmation
	ownedByPalette                   // the command palette
)

// openModal puts md in the slot, sized to the body.
func (m *Model) openModal(md screen.Modal, owner modalOwner) {
	md.SetSize(m.width, m.bodyHeight())
	m.modal, m.owner = md, owner
}

func (m *Model) closeModal() { m.modal = nil }

// settleModal acts on a modal that finished: the flow settles its own;
// the quit confirmation quits on y.
func (m *Model) settleModal() tea.Cmd {
	res, done := m.modal.Result()
	if !done {
		return nil
	}
	switch m.owner {
	case ownedByRoot:
		m.closeModal()
		return nil
	case ownedByPalette:
		m.closeModal()
		if c, args, ok := palette.Invocation(res); ok {
			return m.runCommand(c, args)
		}
		return nil
	case ownedByQuit:
		m.closeModal()
		if !res.OK {
			return m.notes.Show(toast.LevelInfo, "cancelled")
		}
		m.quitting = true
		m.xfer.CancelAll()
		return tea.Quit
	}
	return m.act.Settle(res)
}
