// Package dialog is what cairn-tui's actions ask the operator: the forms,
// their field checks as the operator types, and the local-file checks and
// path completion behind the transfer forms. The forms are widgets/form
// models; what a submitted form starts is the root model's.
package dialog

import (
	"path"
	"path/filepath"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/client"
	"github.com/cairn-dev/cairn/internal/quantity"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/optional"
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
		size := form.Field{Key: "size", Label: "Volume size", Limit: 32, Validate: ValidateVolumeSize,
			Note: "optional: bytes or e.g. 10Gi (Kubernetes only)"}
		return form.New(th, title, name, desc, form.Field{Key: "provision", Label: "provision volume now", Check: true}, size)
	}
	desc.Value = OneLine(th, optional.String(w.Description))
	return form.New(th, title, name, desc)
}

// ValidateVolumeSize accepts an empty size (the server's default) or what
// VolumeSize reads.
func ValidateVolumeSize(v string) string {
	if _, err := VolumeSize(v); err != nil {
		return err.Error()
	}
	return ""
}

// VolumeSize is the size_bytes a create form's size field asks for; 0 when
// it is empty.
func VolumeSize(v string) (int64, error) {
	if strings.TrimSpace(v) == "" {
		return 0, nil
	}
	return quantity.Bytes(v)
}

// Artifact is the edit form of a.
func Artifact(th *theme.Theme, a *cairn.Artifact) *form.Model {
	return form.New(th, "Edit "+a.Name,
		form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Value: a.Name, Validate: ValidateName("artifact")},
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes,
			Value: OneLine(th, optional.String(a.Description)), Validate: ValidateDescription})
}

// Upload asks for a local file, the new artifact's name (derived from the
// file name until edited) and a description.
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

// VolPath is a volume path field's start: its text, and the completion
// from the volume's listing (VolumeDir through CompleteWith).
type VolPath struct {
	Value    string
	Complete func(string) tea.Cmd
}

// VolSave asks for a file — or a directory, with the archive format it is
// packed in — in w's volume, and the new artifact's name, derived from both
// until edited (out + tar.gz → out_tar_gz).
func VolSave(th *theme.Theme, names Names, w *cairn.Workspace, p VolPath, format string) *form.Model {
	title, label := "Save a volume file of "+w.Name+" as a new artifact", "File in the volume"
	if format != "" {
		title, label = "Pack a volume directory of "+w.Name+" as a new artifact", "Directory in the volume"
	}
	name := artifactName(names, w, nil)
	name.From, name.Sources, name.DeriveFrom = "", []string{"path", "format"}, volumeName
	name.Value = volumeName(func(key string) string { return map[string]string{"path": p.Value, "format": format}[key] })
	if p.Value == cairn.MountPath+"/" {
		name.Value = ""
	}
	return form.New(th, title,
		form.Field{Key: "path", Label: label, Limit: cairn.MaxPathBytes, Value: p.Value, Complete: p.Complete,
			Validate: ValidateVolumePath},
		form.Field{Key: "format", Label: "Pack a directory as", Limit: 8, Value: format, Validate: validateFormat,
			Note: "tar.gz or zip; empty saves a single file"},
		name,
		form.Field{Key: "description", Label: "Description", Limit: cairn.MaxDescriptionBytes, Validate: ValidateDescription})
}

// volumeName is a saved path's artifact name: its base name with the
// archive format's extension, outside the name set turned into _.
func volumeName(value func(string) string) string {
	base := path.Base(value("path"))
	if f := value("format"); f != "" {
		base += "." + f
	}
	return client.ArtifactName(base)
}

func validateFormat(v string) string {
	switch v {
	case "", cairn.ArchiveTarGz, cairn.ArchiveZip:
		return ""
	}
	return "tar.gz, zip, or empty for a single file"
}

// VolLoad asks where in w's volume a's content goes; warn notes a file
// the target would overwrite, when the caller knows one.
func VolLoad(th *theme.Theme, w *cairn.Workspace, a *cairn.Artifact, p VolPath, warn func(string) string) *form.Model {
	return form.New(th, "Load "+a.Name+" into the volume of "+w.Name,
		form.Field{Key: "path", Label: "Target in the volume", Limit: cairn.MaxPathBytes, Value: p.Value, Complete: p.Complete,
			Validate: ValidateVolumePath, Warn: warn, Note: "an existing file there is overwritten; its directory must exist"})
}

// VolUpdate asks for the volume file whose bytes become a's content.
func VolUpdate(th *theme.Theme, a *cairn.Artifact, p VolPath) *form.Model {
	title, note := "Replace the content of "+a.Name+" from the volume", "the artifact's content becomes the file's"
	if a.State == cairn.ArtifactMissingObject {
		title, note = "Repair "+a.Name+" from the volume", "the file becomes the content of the MISSING_OBJECT artifact"
	}
	return form.New(th, title,
		form.Field{Key: "path", Label: "File in the volume", Limit: cairn.MaxPathBytes, Value: p.Value, Complete: p.Complete,
			Validate: ValidateVolumePath, Note: note})
}

// Unpack asks for the new directory of w's volume that archive a unpacks
// into.
func Unpack(th *theme.Theme, w *cairn.Workspace, a *cairn.Artifact, p VolPath) *form.Model {
	return form.New(th, "Unpack "+a.Name+" into the volume of "+w.Name,
		form.Field{Key: "path", Label: "New directory in the volume", Limit: cairn.MaxPathBytes, Value: p.Value, Complete: p.Complete,
			Validate: ValidateVolumePath, Note: "it must not exist yet; the archive's entries go inside it, links stay links"})
}

// artifactName is the name field of a new artifact in w, derived from the
// path field until edited, warning while a known artifact has the name.
func artifactName(names Names, w *cairn.Workspace, derive func(string) string) form.Field {
	from := "path"
	if derive == nil {
		from = ""
	}
	return form.Field{Key: "name", Label: "Name", Limit: cairn.MaxNameLength, Validate: ValidateName("artifact"),
		From: from, Derive: derive,
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
