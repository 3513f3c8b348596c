package tui

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/keys"
)

// remoteRefusal turns, in a remote program (Options.Remote), what needs
// the operator's own disk or process into a toast that says what to do
// instead. It runs in the program's filter, before Update: the screens ask
// for an upload or download with an ActionMsg and bubbletea suspends on a
// SuspendMsg, both messages of a Cmd, so nothing is opened — no path
// dialog reading this machine's disk — before the refusal.
func (m *Model) remoteRefusal(msg tea.Msg) (tea.Msg, bool) {
	if !m.remote {
		return nil, false
	}
	switch msg := msg.(type) {
	case common.ActionMsg:
		switch msg.ID {
		case keys.ArtUpload, keys.ArtReplace, keys.ArtDownload:
			return common.ToastMsg{Level: common.LevelInfo, Text: m.noLocalDisk()}, true
		}
	case tea.SuspendMsg:
		return common.ToastMsg{Level: common.LevelInfo,
			Text: "suspend is not available over SSH: the workbench runs on the server; q quits"}, true
	}
	return nil, false
}

// noLocalDisk names the volume-side ways that remain, in this keymap's
// keys, and the CLI for the operator's own files.
func (m *Model) noLocalDisk() string {
	k := func(id keys.ID) string { return m.c.Keys.Action(id).FirstKey() }
	return "over SSH there is no local disk: " + k(keys.VolSave) + " saves a volume file as an artifact, " +
		k(keys.VolLoad) + " loads an artifact into the volume, the files pane (" + k(keys.Files) +
		") browses and saves; for files on your machine run cairn art upload / cairn art download there"
}
