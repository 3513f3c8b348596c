package dialog

import (
	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// Snapshot asks for a new snapshot of w: its name, which the server makes
// up when it is empty, and whether it is taken live.
func Snapshot(th *theme.Theme, w *cairn.Workspace) *form.Model {
	return form.New(th, "Take a snapshot of "+termkit.Sanitize(w.Name),
		form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Validate: validateSnapshotName,
			Note: "optional: snap-<ULID> when empty; unique within the workspace"},
		liveField("take it"))
}

// Fork asks for the workspace a fork of w makes — its name and
// description — and whether the snapshot it starts from is taken live.
func Fork(th *theme.Theme, names Names, w *cairn.Workspace) *form.Model {
	name := form.Field{Key: "name", Label: "New workspace", Limit: cairn.MaxNameLength, Validate: ValidateName("workspace"),
		Warn: func(v string) string {
			if hasWorkspace(names, v) {
				return "a workspace named " + v + " already exists"
			}
			return ""
		},
		Note: "its volume holds what " + termkit.Sanitize(w.Name) + "'s holds now; the snapshot fork-<name> is kept"}
	desc := form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: ValidateDescription}
	return form.New(th, "Fork "+termkit.Sanitize(w.Name), name, desc, liveField("snapshot it"))
}

// liveField is the checkbox of a snapshot taken while containers mount
// the volume, saying what that costs.
func liveField(verb string) form.Field {
	return form.Field{Key: "live", Check: true,
		Label: "live: " + verb + " even while a container mounts the volume (each file whole, the tree not one instant)"}
}

// validateSnapshotName is the server's rule for a snapshot's name, which
// may be empty.
func validateSnapshotName(v string) string {
	if err := (cairn.SnapshotCreate{Name: v}).Validate(); err != nil {
		return cairn.ErrorDetail(err)
	}
	return ""
}
