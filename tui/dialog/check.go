package dialog

import (
	"github.com/cairn-dev/cairn"
	"github.com/cairn-dev/cairn/tui/errtext"
)

// ValidateName is the server's name rule for kind as a sentence ("" when
// valid), checked as the operator types.
func ValidateName(kind string) func(string) string {
	return func(v string) string {
		if err := cairn.ValidateName(kind, v); err != nil {
			return cairn.ErrorDetail(err)
		}
		return ""
	}
}

// ValidateDescription is the server's description bound as a sentence.
func ValidateDescription(v string) string {
	if err := cairn.ValidateDescription(&v); err != nil {
		return cairn.ErrorDetail(err)
	}
	return ""
}

// ValidateVolumePath is the server's lexical check of a volume path.
func ValidateVolumePath(p string) string {
	if err := cairn.ValidateVolumePath(p); err != nil {
		return errtext.VolumeSentence(err)
	}
	return ""
}

func required(what string) func(string) string {
	return func(v string) string {
		if v == "" {
			return "give " + what
		}
		return ""
	}
}

// HasArtifact reports a known artifact of workspace wsID named name.
func HasArtifact(names Names, wsID, name string) bool {
	arts, _ := names.Artifacts(wsID)
	for _, a := range arts {
		if a.Name == name {
			return true
		}
	}
	return false
}

func hasWorkspace(names Names, name string) bool {
	for _, w := range names.Workspaces() {
		if w.Name == name {
			return true
		}
	}
	return false
}
