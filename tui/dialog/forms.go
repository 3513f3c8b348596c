// Package dialog is what cairn-tui's actions ask the operator (TUI.md
// §3.5–3.9): the forms, their field checks as the operator types, and the
// local-file checks and path completion behind the transfer forms. The
// forms are widgets/form models; what a submitted form starts is the root
// model's.
package dialog

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/common"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// Names is what the name warnings look up: the rows the TUI knows.
type Names interface {
	Workspaces() []*cairn.Workspace
	Artifacts(workspaceID string) ([]*cairn.Artifact, bool)
}

// Workspace is the create form (w nil) or the edit form of w.
func Workspace(th *theme.Theme, names Names, title string, w *cairn.Workspace) *form.Model {
	current := ""
	if w != nil {
		current = w.Name
	}
	name := form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Value: current,
		Validate: ValidateName("workspace"),
		Warn: func(v string) string {
			if v != current && hasWorkspace(names, v) {
				return "a workspace named " + v + " already exists"
			}
			return ""
		},
	}
	desc := form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: ValidateDescription}
	if w == nil {
		return form.New(th, title, name, desc, form.Field{Key: "provision", Label: "provision volume now", Check: true})
	}
	desc.Value = OneLine(th, common.Deref(w.Description))
	return form.New(th, title, name, desc)
}

// Artifact is the edit form of a.
func Artifact(th *theme.Theme, a *cairn.Artifact) *form.Model {
	return form.New(th, "Edit "+a.Name,
		form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Value: a.Name, Validate: ValidateName("artifact")},
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes,
			Value: OneLine(th, common.Deref(a.Description)), Validate: ValidateDescription})
}

// Upload asks for a local file, the new artifact's name (derived from the
// file name until edited) and a description (TUI.md §3.7).
func Upload(th *theme.Theme, names Names, w *cairn.Workspace) *form.Model {
	return form.New(th, "Upload to "+w.Name,
		form.Field{Key: "path", Label: "Local file", Limit: 4096, Complete: Complete("path"), Validate: required("a file path")},
		artifactName(names, w, client.ArtifactName),
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: ValidateDescription})
}

// Replace asks for the local file whose bytes become a's content.
func Replace(th *theme.Theme, a *cairn.Artifact) *form.Model {
	title := "Replace the content of " + a.Name
	if a.State == cairn.ArtifactMissingObject {
		title = "Repair " + a.Name
	}
	return form.New(th, title,
		form.Field{Key: "path", Label: "Local file", Limit: 4096, Complete: Complete("path"), Validate: required("a file path")})
}

// Download asks for the target, by default dir/name (transfer.download_dir).
func Download(th *theme.Theme, dir string, a *cairn.Artifact) *form.Model {
	target := filepath.Join(dir, a.Name)
	if dir == "." {
		target = "./" + a.Name
	}
	return form.New(th, "Download "+a.Name+" ("+termkit.Size(a.Size)+")",
		form.Field{Key: "path", Label: "Save to", Limit: 4096, Value: target, Complete: Complete("path"),
			Validate: required("a file path"), Note: "written to <path>.part, verified, then renamed"})
}

// VolSave asks for a file in w's volume and the new artifact's name.
func VolSave(th *theme.Theme, names Names, w *cairn.Workspace) *form.Model {
	return form.New(th, "Save a volume file of "+w.Name+" as a new artifact",
		form.Field{Key: "path", Label: "File in the volume", Limit: cairn.MaxPathBytes, Value: cairn.MountPath + "/",
			Validate: ValidateVolumePath},
		artifactName(names, w, func(p string) string { return client.ArtifactName(path.Base(p)) }),
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: ValidateDescription})
}

// VolLoad asks where in w's volume a's content goes.
func VolLoad(th *theme.Theme, w *cairn.Workspace, a *cairn.Artifact) *form.Model {
	return form.New(th, "Load "+a.Name+" into the volume of "+w.Name,
		form.Field{Key: "path", Label: "Target in the volume", Limit: cairn.MaxPathBytes, Value: cairn.MountPath + "/" + a.Name,
			Validate: ValidateVolumePath, Note: "an existing file there is overwritten; its directory must exist"})
}

// VolUpdate asks for the volume file whose bytes become a's content.
func VolUpdate(th *theme.Theme, a *cairn.Artifact) *form.Model {
	title, note := "Replace the content of "+a.Name+" from the volume", "the artifact's content becomes the file's"
	if a.State == cairn.ArtifactMissingObject {
		title, note = "Repair "+a.Name+" from the volume", "the file becomes the content of the MISSING_OBJECT artifact"
	}
	return form.New(th, title,
		form.Field{Key: "path", Label: "File in the volume", Limit: cairn.MaxPathBytes, Value: cairn.MountPath + "/",
			Validate: ValidateVolumePath, Note: note})
}

// artifactName is the name field of a new artifact in w, derived from the
// path field until edited, warning while a known artifact has the name.
func artifactName(names Names, w *cairn.Workspace, derive func(string) string) form.Field {
	return form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Validate: ValidateName("artifact"),
		From: "path", Derive: derive,
		Warn: func(v string) string {
			if HasArtifact(names, w.ID, v) {
				return w.Name + " already has an artifact named " + v
			}
			return ""
		}}
}

// OneLine shows a description's newlines as the return glyph, for a
// one-line field; MultiLine turns them back.
func OneLine(th *theme.Theme, s string) string {
	return strings.ReplaceAll(s, "\n", th.Glyphs.Return)
}

// MultiLine is OneLine undone.
func MultiLine(th *theme.Theme, s string) string {
	return strings.ReplaceAll(s, th.Glyphs.Return, "\n")
}
