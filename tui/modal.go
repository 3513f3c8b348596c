package tui

import (
	"fmt"
	"strings"

	"github.com/cairn-dev/cairn/internal/termkit"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screens/workspaces"
	"github.com/cairn-dev/cairn/tui/widgets/confirm"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/help"
	"github.com/cairn-dev/cairn/tui/widgets/typed"
)

// intentKind is what a modal's answer leads to.
type intentKind uint8

const (
	intentNone intentKind = iota
	intentCreate
	intentEditWorkspace
	intentEditArtifact
	intentProvision
	intentTeardown
	intentDeleteReady // step 1 of deleting a READY workspace
	intentDeleteWorkspace
	intentDeleteArtifact
	intentQuit
	intentUpload
	intentReplace        // the path form of a replace
	intentReplaceConfirm // its (y/N)
	intentDownload
	intentOverwrite // the download target exists
	intentVolSave
	intentVolLoad
	intentVolUpdate
	intentCancelTransfer // past 50 %
)

// intent is the pending purpose of the open modal.
type intent struct {
	kind  intentKind
	wsID  string
	artID string
	// teardownFirst: the typed delete of a READY workspace.
	teardownFirst bool
	// opID is the operation a busy form waits for.
	opID int
	// A transfer's local path, its size, and what the form asked.
	path       string
	size       int64
	name, desc string
	repair     bool
	transfer   int // intentCancelTransfer
}

func (m *Model) openModal(md common.Modal, in intent) {
	md.SetSize(m.width, m.bodyHeight())
	m.modal, m.intent = md, in
}

func (m *Model) openConfirm(in intent, title, text string) {
	m.openModal(confirm.New(m.c.Theme, title, text), in)
}

func (m *Model) openTyped(in intent, title, text, expect string) {
	m.openModal(typed.New(m.c.Theme, title, text, expect), in)
}

func (m *Model) closeModal() {
	m.modal, m.intent = nil, intent{}
}

// settleModal acts on a modal that finished: a form's submit starts its
// operation (the form stays open, busy), anything else closes.
func (m *Model) settleModal() tea.Cmd {
	res, done := m.modal.Result()
	if !done {
		return nil
	}
	in := m.intent
	if f, isForm := m.modal.(*form.Model); isForm && res.OK {
		switch in.kind {
		case intentUpload, intentReplace, intentDownload:
			return m.submitTransferForm(f, in, res)
		case intentVolSave, intentVolLoad, intentVolUpdate:
			return m.submitVolumeForm(f, in, res)
		}
		return m.submitForm(f, in, res)
	}
	m.closeModal()
	if !res.OK {
		if in.kind != intentNone && !isForm(in.kind) {
			return m.toast(common.LevelInfo, "cancelled")
		}
		return nil
	}
	return m.confirmed(in)
}

func isForm(k intentKind) bool {
	switch k {
	case intentCreate, intentEditWorkspace, intentEditArtifact, intentUpload, intentReplace, intentDownload,
		intentVolSave, intentVolLoad, intentVolUpdate:
		return true
	}
	return false
}

// confirmed runs what a confirmation was for.
func (m *Model) confirmed(in intent) tea.Cmd {
	switch in.kind {
	case intentQuit:
		m.quitting = true
		m.xfer.CancelAll()
		return tea.Quit
	case intentProvision:
		return m.ops.Run(m.wsOp(ops.Provision, in.wsID))
	case intentTeardown:
		return m.ops.Run(m.wsOp(ops.Teardown, in.wsID))
	case intentDeleteReady:
		m.typedDelete(in.wsID, true)
	case intentDeleteWorkspace:
		o := m.wsOp(ops.DeleteWorkspace, in.wsID)
		if in.teardownFirst {
			o = m.wsOp(ops.Teardown, in.wsID)
			o.ThenDelete = true
		}
		return m.ops.Run(o)
	case intentDeleteArtifact:
		return m.ops.Run(m.artOp(ops.DeleteArtifact, in.artID))
	case intentReplaceConfirm:
		return m.enqueueReplace(in)
	case intentOverwrite:
		return m.enqueueDownload(in, true)
	case intentCancelTransfer:
		return m.xfer.Cancel(in.transfer)
	}
	return nil
}

// helpModal lists the bindings: global, navigation, this screen, modals.
func (m *Model) helpModal() common.Modal {
	ctx := m.top().Keys()
	var nav, screen []keys.State
	for _, b := range ctx.Bindings {
		if b.Scope == keys.ScopeNav {
			nav = append(nav, b)
		} else {
			screen = append(screen, b)
		}
	}
	lines := help.Lines(m.c.Theme, []help.Group{
		{Title: "Global", Bindings: m.globalKeys()},
		{Title: "Navigation", Bindings: nav},
		{Title: "This screen (" + ctx.Name + ")", Bindings: screen},
	})
	lines = append(lines, "", m.c.Theme.Bold.Render("Modals"),
		"(y/N)         only y confirms; any other key cancels",
		"typed         the exact name, then enter; esc cancels",
		"forms         tab/shift+tab or down/up between fields; space toggles; enter submits; esc cancels",
		"path fields   tab completes a local path (the longest common prefix, or the candidates); ~ is home",
		"busy forms    esc closes the form; the operation goes on and its result is a toast",
		"", m.c.Theme.Dim.Render("y/Y copy with OSC 52; in tmux it needs set-clipboard on."))
	return help.New(m.c.Theme, "Help", lines)
}

// globalKeys is the global context with its state.
func (m *Model) globalKeys() []keys.State {
	ctx := keys.Context{Name: "global", Bindings: m.c.Keys.Enabled(keys.ScopeGlobal)}
	if len(m.stack) == 1 {
		if _, ok := m.stack[0].(*workspaces.Screen).Selected(); !ok {
			ctx.Disable(keys.Jump2, "no workspace selected")
		}
	}
	return ctx.Bindings
}

// messagesModal lists the last toasts, newest first, with time and
// request ID.
func (m *Model) messagesModal() common.Modal {
	log := m.toasts.Log()
	lines := make([]string, 0, len(log))
	for i := len(log) - 1; i >= 0; i-- {
		t := log[i]
		line := t.At.Local().Format("15:04:05") + " " + toastWord(m, t.Level) + " " + t.Text
		if t.RequestID != "" && !strings.Contains(t.Text, t.RequestID) {
			line += fmt.Sprintf("  (request ID %s)", t.RequestID)
		}
		lines = append(lines, line)
		if t.Detail != "" && !strings.Contains(t.Text, t.Detail) {
			lines = append(lines, "         "+m.c.Theme.Dim.Render("server: "+termkit.Sanitize(t.Detail)))
		}
	}
	if len(lines) == 0 {
		lines = append(lines, "no messages yet")
	}
	return help.New(m.c.Theme, "Messages", lines)
}

func toastWord(m *Model, l common.Level) string {
	g := m.c.Theme.Glyphs
	switch l {
	case common.LevelOK:
		return g.OK
	case common.LevelInfo:
		return g.Info
	case common.LevelWarn:
		return g.Warn
	}
	return g.Error
}
