package dialog

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/internal/termkit"
	"github.com/cairn-dev/cairn/tui/theme"
	"github.com/cairn-dev/cairn/tui/widgets/form"
)

// The forms of the files pane's changes: each names a path of the volume
// the server's writer acts on. warn is the caller's note about what the
// pane lists at that path ("" for none): the server still decides.

// maxNameBytes is the most a file name may be on the volume's filesystem
// (NAME_MAX).
const maxNameBytes = 255

// MakeDir asks for the name of a new directory in dir.
func MakeDir(th *theme.Theme, dir string, warn func(name string) string) *form.Model {
	return form.New(th, "New directory in "+termkit.Sanitize(dir),
		form.Field{Key: "name", Label: "Name", Limit: maxNameBytes, Validate: ValidateEntryName(dir), Warn: warn})
}

// Move asks for the new path of the entry at p.Value, its path to edit: a
// new name renames it, another directory moves it there.
func Move(th *theme.Theme, p VolPath, warn func(string) string) *form.Model {
	return form.New(th, "Rename or move "+termkit.Sanitize(path.Base(p.Value)),
		form.Field{Key: "path", Label: "New path in the volume", Limit: cairn.MaxPathBytes, Value: p.Value, Complete: p.Complete,
			Validate: ValidateVolumePath, Warn: warn, Note: "nothing may be there yet: a move never replaces"})
}

// PutFile asks for a local file and the path in the volume it is written
// to: the directory dir.Value and the file's name until edited.
func PutFile(th *theme.Theme, dir VolPath, warn func(string) string) *form.Model {
	into := func(local string) string {
		base := filepath.Base(ExpandHome(local))
		if local == "" || base == "." || base == string(filepath.Separator) {
			return strings.TrimSuffix(dir.Value, "/") + "/"
		}
		return path.Join(dir.Value, base)
	}
	return form.New(th, "Upload a local file into "+termkit.Sanitize(dir.Value),
		form.Field{Key: "local", Label: "Local file", Limit: 4096, Complete: Complete("local"), Validate: required("a file path")},
		form.Field{Key: "path", Label: "Into the volume", Limit: cairn.MaxPathBytes, Value: into(""), Complete: dir.Complete,
			Validate: ValidateVolumePath, Warn: warn, From: "local", Derive: into,
			Note: "up to the server's files.write.maxBytes; a larger file goes in as an artifact (u), then L"})
}

// ValidateEntryName checks the name of a new entry of dir: one name, not
// a path, that the API can address there.
func ValidateEntryName(dir string) func(string) string {
	return func(v string) string {
		switch {
		case v == "":
			return "give a name"
		case v == "." || v == "..":
			return v + " is not a new name"
		case strings.Contains(v, "/"):
			return "one name, without / — R on an entry moves it elsewhere"
		}
		return ValidateVolumePath(path.Join(dir, v))
	}
}
