package tui

import (
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/feed"

	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/ptyshell"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
)

// onAction runs a screen's action: guards first (the server still
// decides), then the confirmation or form (TUI.md §3).
func (m *Model) onAction(a common.ActionMsg) tea.Cmd {
	if m.c.Config.ReadOnly && m.c.Keys.Action(a.ID).Mutates {
		return m.toast(common.LevelInfo, "read-only mode")
	}
	if a.ID == keys.WsNew {
		m.openModal(dialog.Workspace(m.c.Theme, m.sh.st, "New workspace", nil), intent{kind: intentCreate})
		return nil
	}
	if a.ArtifactID != "" {
		return m.artifactAction(a)
	}
	w, ok := m.sh.st.Workspace(a.WorkspaceID)
	if !ok {
		return m.toast(common.LevelInfo, "no workspace selected")
	}
	if p := m.ops.Pending(w.ID); p != "" {
		return m.toast(common.LevelInfo, "busy: "+p)
	}
	return m.workspaceAction(a.ID, w)
}

func (m *Model) workspaceAction(id keys.ID, w *cairn.Workspace) tea.Cmd {
	in := intent{wsID: w.ID}
	switch id {
	case keys.WsEdit:
		in.kind = intentEditWorkspace
		m.openModal(dialog.Workspace(m.c.Theme, m.sh.st, "Edit "+w.Name, w), in)
	case keys.WsProvision:
		if w.VolumeState != cairn.VolumeNone {
			return m.toast(common.LevelInfo, w.Name+" already has a volume")
		}
		in.kind = intentProvision
		m.openConfirm(in, "Provision volume", fmt.Sprintf("Provision a volume for %s (%s)?", w.Name, w.VolumeName))
	case keys.WsTeardown:
		if w.VolumeState != cairn.VolumeReady {
			return m.toast(common.LevelInfo, w.Name+" has no volume")
		}
		return m.checkMounts(w)
	case keys.ArtUpload:
		in.kind = intentUpload
		m.openModal(dialog.Upload(m.c.Theme, m.sh.st, w), in)
	case keys.Shell:
		return m.shell.Open(w, ptyshell.Size{Cols: max(1, m.width), Rows: max(1, m.height)})
	case keys.VolSave:
		if w.VolumeState != cairn.VolumeReady {
			return m.toast(common.LevelInfo, "needs volume READY — v provisions it")
		}
		in.kind = intentVolSave
		m.openModal(dialog.VolSave(m.c.Theme, m.sh.st, w), in)
	case keys.WsDelete:
		if w.VolumeState == cairn.VolumeReady {
			in.kind = intentDeleteReady
			m.openConfirm(in, "Delete workspace", fmt.Sprintf(
				"%s still has a volume (READY); it must be torn down first. Tear down, then delete?", w.Name))
			return nil
		}
		m.typedDelete(w.ID, false)
	}
	return nil
}

// typedDelete asks for the name; after a READY step it lists both effects.
func (m *Model) typedDelete(wsID string, teardownFirst bool) {
	w, ok := m.sh.st.Workspace(wsID)
	if !ok {
		return
	}
	n, _ := m.sh.st.Counts(wsID)
	records := fmt.Sprintf("its %s artifact %s", termkit.Count(n.Total()), plural(n.Total(), "record", "records"))
	text := fmt.Sprintf("Delete %s with %s? Their objects are reclaimed later by the maintainer.", w.Name, records)
	if n.Total() == 0 {
		text = fmt.Sprintf("Delete %s? It has no artifacts.", w.Name)
	}
	if teardownFirst {
		text = fmt.Sprintf("This will tear down volume %s and delete %s with %s.", w.VolumeName, w.Name, records)
	}
	m.openTyped(intent{kind: intentDeleteWorkspace, wsID: wsID, teardownFirst: teardownFirst}, "Delete workspace", text, w.Name)
}

// checkMounts re-fetches the mount count before a teardown may be
// confirmed.
func (m *Model) checkMounts(w *cairn.Workspace) tea.Cmd {
	o := m.wsOp(ops.Teardown, w.ID)
	m.ops.AddTask(o.ID, "checking mounts of "+w.Name+"…")
	b, ctx := m.backend, m.ctx
	return func() tea.Msg {
		d, err := b.InspectWorkspace(ctx, o.WSID)
		return mountCheckMsg{op: o, detail: d, err: err}
	}
}

// onMountCheck refuses a teardown while mounted (or when nobody can tell)
// and otherwise asks for the typed name.
func (m *Model) onMountCheck(msg mountCheckMsg) tea.Cmd {
	m.ops.EndTask(msg.op.ID)
	if msg.err != nil {
		return m.opFailed(msg.op, msg.err, 0)
	}
	w := msg.detail.Workspace
	cmd := m.changed(m.sh.st.PutWorkspace(w, m.sh.Now()), feed.OriginResync)
	m.sh.st.SetMounts(w.ID, msg.detail.MountCount)
	switch n := msg.detail.MountCount; {
	case n > 0:
		return tea.Batch(cmd, m.toast(common.LevelWarn, common.MountedSentence(n)))
	case n < 0:
		return tea.Batch(cmd, m.toast(common.LevelWarn, "cannot tell whether the volume is mounted (mount count unknown) — try again"))
	}
	m.openTyped(intent{kind: intentTeardown, wsID: w.ID}, "Tear down volume",
		fmt.Sprintf("Tear down volume %s of %s? Its files are deleted; artifacts stay.", w.VolumeName, w.Name), w.Name)
	return cmd
}

func (m *Model) artifactAction(a common.ActionMsg) tea.Cmd {
	art, ok := m.sh.st.Artifact(a.ArtifactID)
	if !ok {
		return m.toast(common.LevelInfo, "no artifact selected")
	}
	if p := m.ops.Pending(art.ID); p != "" {
		return m.toast(common.LevelInfo, "busy: "+p)
	}
	in := intent{wsID: art.WorkspaceID, artID: art.ID}
	switch a.ID {
	case keys.ArtEdit:
		in.kind = intentEditArtifact
		m.openModal(dialog.Artifact(m.c.Theme, art), in)
	case keys.ArtDelete:
		in.kind = intentDeleteArtifact
		m.openConfirm(in, "Delete artifact", fmt.Sprintf(
			"Delete %s (%s)? Its object is reclaimed later by the maintainer.", art.Name, termkit.Size(art.Size)))
	case keys.Preview:
		return m.openPreview(art)
	case keys.ArtReplace:
		in.kind = intentReplace
		m.openModal(dialog.Replace(m.c.Theme, art), in)
	case keys.ArtDownload:
		if art.State != cairn.ArtifactRecorded {
			return m.toast(common.LevelInfo, art.Name+" is MISSING_OBJECT — nothing to download")
		}
		in.kind = intentDownload
		m.openModal(dialog.Download(m.c.Theme, m.c.Config.DownloadDir, art), in)
	case keys.VolLoad, keys.VolUpdate:
		return m.volumeArtifactAction(a.ID, art)
	}
	return nil
}
