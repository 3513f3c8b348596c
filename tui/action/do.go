package action

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/deps"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/errtext"
	"github.com/cairn-dev/cairn/tui/feed"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/screens/preview"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// Do runs a screen's action: guards first (the server still
// decides), then the confirmation or form.
func (act *Flow) Do(a screen.ActionMsg) tea.Cmd {
	if act.c.Config.ReadOnly && act.c.Keys.Action(a.ID).Mutates {
		return act.host.Toast(toast.LevelInfo, "read-only mode")
	}
	if a.ID == keys.WsNew {
		act.openModal(dialog.Workspace(act.c.Theme, act.st, "New workspace", nil), intent{kind: intentCreate})
		return nil
	}
	if len(a.Marked) > 0 {
		return act.bulkAction(a)
	}
	if a.ArtifactID != "" {
		return act.artifactAction(a)
	}
	w, ok := act.st.Workspace(a.WorkspaceID)
	if !ok {
		return act.host.Toast(toast.LevelInfo, "no workspace selected")
	}
	if p := act.ops.Pending(w.ID); p != "" {
		return act.host.Toast(toast.LevelInfo, "busy: "+p)
	}
	return act.workspaceAction(a, w)
}

func (act *Flow) workspaceAction(a screen.ActionMsg, w *cairn.Workspace) tea.Cmd {
	in := intent{wsID: w.ID}
	switch id := a.ID; id {
	case keys.WsEdit:
		in.kind = intentEditWorkspace
		act.openModal(dialog.Workspace(act.c.Theme, act.st, "Edit "+w.Name, w), in)
	case keys.WsProvision:
		if w.VolumeState != cairn.VolumeNone {
			return act.host.Toast(toast.LevelInfo, w.Name+" already has a volume")
		}
		in.kind = intentProvision
		act.openConfirm(in, "Provision volume", fmt.Sprintf("Provision a volume for %s (%s)?", w.Name, w.VolumeName))
	case keys.WsTeardown:
		if w.VolumeState != cairn.VolumeReady {
			return act.host.Toast(toast.LevelInfo, w.Name+" has no volume")
		}
		return act.checkMounts(w)
	case keys.ArtUpload:
		in.kind = intentUpload
		act.openModal(dialog.Upload(act.c.Theme, act.st, w), in)
	case keys.Shell:
		return act.host.OpenShell(w)
	case keys.WsSweep:
		return act.ops.Run(act.wsOp(ops.Sweep, w.ID))
	case keys.WsTouch:
		o := act.wsOp(ops.Touch, w.ID)
		o.WSName = termkit.Sanitize(o.WSName)
		return act.ops.Run(o)
	case keys.VolSave:
		if w.VolumeState != cairn.VolumeReady {
			return act.host.Toast(toast.LevelInfo, "needs volume READY — v provisions it")
		}
		in.kind = intentVolSave
		act.openModal(dialog.VolSave(act.c.Theme, act.st, w, act.volPath(w.ID, cairn.MountPath+"/"), ""), in)
	case keys.Files, keys.FilesPreview, keys.FilesSave, keys.FilesLoad, keys.FilesUnpack,
		keys.FilesEdit, keys.FilesMkdir, keys.FilesUpload, keys.FilesMove, keys.FilesDelete:
		return act.fileAction(a, w)
	case keys.WsDelete:
		if w.VolumeState == cairn.VolumeReady {
			in.kind = intentDeleteReady
			act.openConfirm(in, "Delete workspace", fmt.Sprintf(
				"%s still has a volume (READY); it must be torn down first. Tear down, then delete?", w.Name))
			return nil
		}
		act.typedDelete(w.ID, false)
	}
	return nil
}

// typedDelete asks for the name; after a READY step it lists both effects.
func (act *Flow) typedDelete(wsID string, teardownFirst bool) {
	w, ok := act.st.Workspace(wsID)
	if !ok {
		return
	}
	n, _ := act.st.Counts(wsID)
	records := fmt.Sprintf("its %s artifact %s", termkit.Count(n.Total()), termkit.Plural(n.Total(), "record", "records"))
	text := fmt.Sprintf("Delete %s with %s? Their objects are reclaimed later by the maintainer.", w.Name, records)
	if n.Total() == 0 {
		text = fmt.Sprintf("Delete %s? It has no artifacts.", w.Name)
	}
	if teardownFirst {
		text = fmt.Sprintf("This will tear down volume %s and delete %s with %s.", w.VolumeName, w.Name, records)
	}
	act.openTyped(intent{kind: intentDeleteWorkspace, wsID: wsID, teardownFirst: teardownFirst}, "Delete workspace", text, w.Name)
}

// checkMounts re-fetches the mount count before a teardown may be
// confirmed.
func (act *Flow) checkMounts(w *cairn.Workspace) tea.Cmd {
	o := act.wsOp(ops.Teardown, w.ID)
	act.ops.AddTask(o.ID, "checking mounts of "+w.Name+"…")
	b, ctx := act.backend, act.ctx
	return func() tea.Msg {
		d, err := b.InspectWorkspace(ctx, o.WSID)
		return mountCheckMsg{op: o, detail: d, err: err}
	}
}

// onMountCheck refuses a teardown while mounted (or when nobody can tell)
// and otherwise asks for the typed name.
func (act *Flow) onMountCheck(msg mountCheckMsg) tea.Cmd {
	act.ops.EndTask(msg.op.ID)
	if msg.err != nil {
		return act.opFailed(msg.op, msg.err, 0)
	}
	w := msg.detail.Workspace
	cmd := act.host.Changed(act.st.PutWorkspace(w, act.host.Now()), feed.OriginResync)
	act.st.SetMounts(w.ID, msg.detail.MountCount)
	switch n := msg.detail.MountCount; {
	case n > 0:
		return tea.Batch(cmd, act.host.Toast(toast.LevelWarn, errtext.MountedSentence(n)))
	case n < 0:
		return tea.Batch(cmd, act.host.Toast(toast.LevelWarn, "cannot tell whether the volume is mounted (mount count unknown) — try again"))
	}
	act.openTyped(intent{kind: intentTeardown, wsID: w.ID}, "Tear down volume",
		fmt.Sprintf("Tear down volume %s of %s? Its files are deleted; artifacts stay.", w.VolumeName, w.Name), w.Name)
	return cmd
}

func (act *Flow) artifactAction(a screen.ActionMsg) tea.Cmd {
	art, ok := act.st.Artifact(a.ArtifactID)
	if !ok {
		return act.host.Toast(toast.LevelInfo, "no artifact selected")
	}
	if p := act.ops.Pending(art.ID); p != "" {
		return act.host.Toast(toast.LevelInfo, "busy: "+p)
	}
	in := intent{wsID: art.WorkspaceID, artID: art.ID}
	switch a.ID {
	case keys.ArtEdit:
		in.kind = intentEditArtifact
		act.openModal(dialog.Artifact(act.c.Theme, art), in)
	case keys.ArtDelete:
		in.kind = intentDeleteArtifact
		act.openConfirm(in, "Delete artifact", fmt.Sprintf(
			"Delete %s (%s)? Its object is reclaimed later by the maintainer.", art.Name, termkit.Size(art.Size)))
	case keys.Preview:
		return act.openPreview(art)
	case keys.ArtReplace:
		in.kind = intentReplace
		act.openModal(dialog.Replace(act.c.Theme, art), in)
	case keys.ArtDownload:
		if art.State != cairn.ArtifactRecorded {
			return act.host.Toast(toast.LevelInfo, art.Name+" is MISSING_OBJECT — nothing to download")
		}
		in.kind = intentDownload
		act.openModal(dialog.Download(act.c.Theme, act.c.Config.DownloadDir, art), in)
	case keys.VolLoad, keys.VolUpdate:
		return act.volumeArtifactAction(a.ID, art)
	}
	return nil
}

// openPreview pushes the preview of a RECORDED artifact and fetches its
// head: up to preview.max_bytes of a text type, the card's 256 bytes of
// anything else.
func (act *Flow) openPreview(a *cairn.Artifact) tea.Cmd {
	if a.State != cairn.ArtifactRecorded {
		return act.host.Toast(toast.LevelInfo, "no object to preview — U to replace")
	}
	text := deps.TextType(a.MIMEType, act.c.Config.PreviewMIMEAllow)
	n := int64(preview.CardBytes)
	if text {
		n = act.c.Config.PreviewMaxBytes
	}
	req := act.host.NextID()
	act.host.Push(preview.New(act.c, a, req, text))
	b, ctx, id, at := act.backend, act.ctx, a.ID, a.UpdatedAt
	return func() tea.Msg {
		data, total, err := b.ReadHead(ctx, id, n)
		return preview.Msg{ArtifactID: id, UpdatedAt: at, Req: req, Data: data, Total: total, Err: err}
	}
}
