package tui

import (
	"path"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/keys"
	"github.com/cairn-dev/cairn/tui/ops"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// The volume transfers move bytes between the workspace volume and the
// store inside the server (sidecar containers), so they are operations,
// not transfers: no bytes pass through here, and the form waits for the
// server's answer, whose refusals go under the field.

// volSaveForm asks for a volume file and the new artifact's name.
func (m *Model) volSaveForm(w *cairn.Workspace) *form.Model {
	st := m.sh.st
	return form.New(m.c.Theme, "Save a volume file of "+w.Name+" as a new artifact",
		form.Field{Key: "path", Label: "File in the volume", Limit: cairn.MaxPathBytes, Value: cairn.MountPath + "/",
			Validate: validateVolumePath},
		form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Validate: validateName("artifact"),
			From: "path", Derive: func(p string) string { return client.ArtifactName(path.Base(p)) },
			Warn: func(v string) string {
				if hasArtifactNamed(st, w.ID, v) {
					return w.Name + " already has an artifact named " + v
				}
				return ""
			}},
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: validateDescription})
}

// volumeArtifactAction opens the load or update form of an artifact;
// both need the volume READY.
func (m *Model) volumeArtifactAction(id keys.ID, a *cairn.Artifact) tea.Cmd {
	w, ok := m.sh.st.Workspace(a.WorkspaceID)
	if !ok || w.VolumeState != cairn.VolumeReady {
		return m.toast(common.LevelInfo, "needs volume READY — v provisions it")
	}
	in := intent{wsID: a.WorkspaceID, artID: a.ID}
	if id == keys.VolLoad {
		if a.State != cairn.ArtifactRecorded {
			return m.toast(common.LevelInfo, a.Name+" is MISSING_OBJECT — nothing to load")
		}
		in.kind = intentVolLoad
		m.openModal(form.New(m.c.Theme, "Load "+a.Name+" into the volume of "+w.Name,
			form.Field{Key: "path", Label: "Target in the volume", Limit: cairn.MaxPathBytes, Value: cairn.MountPath + "/" + a.Name,
				Validate: validateVolumePath, Note: "an existing file there is overwritten; its directory must exist"}), in)
		return nil
	}
	in.kind, in.repair = intentVolUpdate, a.State == cairn.ArtifactMissingObject
	title, note := "Replace the content of "+a.Name+" from the volume", "the artifact's content becomes the file's"
	if in.repair {
		title, note = "Repair "+a.Name+" from the volume", "the file becomes the content of the MISSING_OBJECT artifact"
	}
	m.openModal(form.New(m.c.Theme, title,
		form.Field{Key: "path", Label: "File in the volume", Limit: cairn.MaxPathBytes, Value: cairn.MountPath + "/",
			Validate: validateVolumePath, Note: note}), in)
	return nil
}

// validateVolumePath is the server's lexical check, as a sentence.
func validateVolumePath(p string) string {
	if err := cairn.ValidateVolumePath(p); err != nil {
		return common.VolumeSentence(err)
	}
	return ""
}

// submitVolumeForm starts the operation; the form stays open and busy
// (esc closes it and the operation goes on as a task).
func (m *Model) submitVolumeForm(f *form.Model, in intent, res common.Result) tea.Cmd {
	var o ops.Op
	switch in.kind {
	case intentVolSave:
		o = m.wsOp(ops.VolSave, in.wsID)
		o.Name = res.Values["name"]
		if d := m.multiLine(res.Values["description"]); d != "" {
			o.Desc = &d
		}
	case intentVolLoad:
		o = m.artOp(ops.VolLoad, in.artID)
	default:
		o = m.artOp(ops.VolUpdate, in.artID)
		o.Repair = in.repair
	}
	o.Path = res.Values["path"]
	m.intent.opID = o.ID
	f.BusyWith(m.sh.Frame(), "the server is moving the bytes (this can take a while; esc closes the form)…")
	return m.ops.Run(o)
}
