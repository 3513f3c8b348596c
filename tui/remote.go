package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/help"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// remoteRefusal turns, in a remote program (Options.Remote), what needs
// the operator's own disk or process into a toast that says what to do
// instead. It runs in the program's filter, before Update: the screens ask
// for an upload or download with an ActionMsg and bubbletea suspends on a
// SuspendMsg, both messages of a Cmd, so nothing is opened — no path
// dialog reading this machine's disk — before the refusal.
func (m *Model) remoteRefusal(msg tea.Msg) (tea.Msg, bool) {
	if !m.c.Remote {
		return nil, false
	}
	switch msg := msg.(type) {
	case screen.ActionMsg:
		switch msg.ID {
		case keys.ArtUpload, keys.ArtReplace, keys.ArtDownload, keys.FilesUpload:
			return noLocalDiskMsg{}, true
		case keys.FilesEdit:
			return screen.ToastMsg{Level: toast.LevelInfo,
				Text: "no editor over SSH: the workbench runs on the server — i saves the file as an artifact to edit elsewhere"}, true
		}
	case tea.SuspendMsg:
		return screen.ToastMsg{Level: toast.LevelInfo,
			Text: "suspend is not available over SSH: the workbench runs on the server; q quits"}, true
	}
	return nil, false
}

// noLocalDiskMsg opens the modal that says why a transfer to or from the
// operator's disk cannot run here, and what can.
type noLocalDiskMsg struct{}

// noLocalDiskModal names the volume-side ways that remain, in this
// keymap's keys, and the CLI for the operator's own files. A modal, not a
// toast: it is three sentences, which no toast line holds at 60 columns.
func (m *Model) noLocalDiskModal() screen.Modal {
	k := func(id keys.ID) string { return m.c.Keys.Action(id).FirstKey() }
	return help.New(m.c.Theme, "No local disk over SSH", []string{
		"The workbench runs on the server: its disk is",
		"not yours, so nothing moves to or from your machine.",
		"",
		fmt.Sprintf("%-4s saves a volume file as an artifact", k(keys.VolSave)),
		fmt.Sprintf("%-4s loads an artifact into the volume", k(keys.VolLoad)),
		fmt.Sprintf("%-4s the files pane: browse, preview, save, pack", k(keys.Files)),
		"",
		"For files on your machine, run there:",
		"  cairn art upload WS FILE",
		"  cairn art download WS/NAME",
	})
}
