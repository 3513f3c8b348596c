package action

import (
	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/dialog"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/widgets/form"
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
		return act.host.Toast(common.LevelInfo, "needs volume READY — v provisions it")
	}
	in := intent{wsID: a.WorkspaceID, artID: a.ID}
	if id == keys.VolLoad {
		if a.State != cairn.ArtifactRecorded {
			return act.host.Toast(common.LevelInfo, a.Name+" is MISSING_OBJECT — nothing to load")
		}
		in.kind = intentVolLoad
		act.openModal(dialog.VolLoad(act.c.Theme, w, a), in)
		return nil
	}
	in.kind, in.repair = intentVolUpdate, a.State == cairn.ArtifactMissingObject
	act.openModal(dialog.VolUpdate(act.c.Theme, a), in)
	return nil
}

// submitVolumeForm starts the operation; the form stays open and busy
// (esc closes it and the operation goes on as a task).
func (act *Flow) submitVolumeForm(f *form.Model, in intent, res common.Result) tea.Cmd {
	var o ops.Op
	switch in.kind {
	case intentVolSave:
		o = act.wsOp(ops.VolSave, in.wsID)
		o.Name = res.Values["name"]
		if d := dialog.MultiLine(act.c.Theme, res.Values["description"]); d != "" {
			o.Desc = &d
		}
	case intentVolLoad:
		o = act.artOp(ops.VolLoad, in.artID)
	default:
		o = act.artOp(ops.VolUpdate, in.artID)
		o.Repair = in.repair
	}
	o.Path = res.Values["path"]
	act.intent.opID = o.ID
	f.BusyWith(act.host.Frame(), "the server is moving the bytes (this can take a while; esc closes the form)…")
	return act.ops.Run(o)
}
