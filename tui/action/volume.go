package action

import (
	"path"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/screen"
	"github.com/cairn-dev/cairn/tui/widgets/form"
	"github.com/cairn-dev/cairn/tui/widgets/toast"
)

// The volume transfers move bytes between the workspace volume and the
// store inside the server (sidecar containers), so they are operations,
// not transfers: no bytes pass through here, and the form waits for the
// server's answer, whose refusals go under the field.

// volumeArtifactAction opens the load or update form of an artifact;
// both need the volume READY.
func (act *Flow) volumeArtifactAction(id keys.ID, a *cairn.Artifact) tea.Cmd {
	w, ok := act.st.Workspace(a.WorkspaceID)
	if !ok || w.VolumeState != cairn.VolumeReady {
		return act.host.Toast(toast.LevelInfo, "needs volume READY — v provisions it")
	}
	in := intent{wsID: a.WorkspaceID, artID: a.ID}
	if id == keys.VolLoad {
		if a.State != cairn.ArtifactRecorded {
			return act.host.Toast(toast.LevelInfo, a.Name+" is MISSING_OBJECT — nothing to load")
		}
		in.kind = intentVolLoad
		act.openModal(dialog.VolLoad(act.c.Theme, w, a, act.volPath(w.ID, cairn.MountPath+"/"+a.Name), nil), in)
		return nil
	}
	in.kind, in.repair = intentVolUpdate, a.State == cairn.ArtifactMissingObject
	act.openModal(dialog.VolUpdate(act.c.Theme, a, act.volPath(w.ID, cairn.MountPath+"/")), in)
	return nil
}

// volPath is a volume path field of workspace wsID starting at value,
// completing from the volume's listing.
func (act *Flow) volPath(wsID, value string) dialog.VolPath {
	return dialog.VolPath{Value: value, Complete: dialog.CompleteWith("path", dialog.VolumeDir(act.ctx, act.backend, wsID))}
}

// submitVolumeForm starts the operation; the form stays open and busy
// (esc closes it and the operation goes on as a task).
func (act *Flow) submitVolumeForm(f *form.Model, in intent, res screen.Result) tea.Cmd {
	var o ops.Op
	switch in.kind {
	case intentVolSave:
		o = act.wsOp(ops.VolSave, in.wsID)
		o.Name, o.Format = res.Values["name"], res.Values["format"]
		if d := dialog.MultiLine(act.c.Theme, res.Values["description"]); d != "" {
			o.Desc = &d
		}
	case intentVolLoad:
		o = act.artOp(ops.VolLoad, in.artID)
	case intentUnpack:
		o = act.artOp(ops.Unpack, in.artID)
	default:
		o = act.artOp(ops.VolUpdate, in.artID)
		o.Repair = in.repair
	}
	o.Path = path.Clean(res.Values["path"])
	act.intent.opID = o.ID
	f.BusyWith(act.host.Frame(), "the server is moving the bytes (this can take a while; esc closes the form)…")
	return act.ops.Run(o)
}
