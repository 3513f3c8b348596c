package cairn

import (
	"path"
	"strings"
	"unicode/utf8"
)

// ValidateVolumePath checks a source or target path against the mount,
// lexically: absolute, not the mount point itself, and under it component
// by component (MountPath+"X" is outside). The sidecar re-checks against
// the real filesystem, symlinks included; its check is the authoritative
// one.
//
// A path that could not name a file the same way for every party — longer
// than MaxPathBytes, not UTF-8, or holding a control character (NUL, ESC,
// DEL, a newline…) — is invalid_path, and is never echoed back.
func ValidateVolumePath(p string) error {
	if err := checkPathBytes(p); err != nil {
		return err
	}
	if !strings.HasPrefix(p, "/") {
		return Errorf(ReasonPathOutsideMount,
			"path '%s' must be absolute, and within the workspace volume mounted at '%s'", p, MountPath)
	}
	cleaned := path.Clean(p)
	if cleaned == MountPath {
		return Errorf(ReasonPathIsMountRoot,
			"path '%s' is the workspace volume mount point itself, not a file within it", p)
	}
	if !strings.HasPrefix(cleaned, MountPath+"/") {
		return Errorf(ReasonPathOutsideMount,
			"path '%s' resolves to '%s', which is outside the workspace volume mounted at '%s'", p, cleaned, MountPath)
	}
	return nil
}

// Validate checks a save from the volume before anything is looked up: a
// source path, an archive format a pack writes, the name and the
// description.
func (c VolumeArtifactCreate) Validate() error {
	if err := RequireParam("source_path", c.SourcePath); err != nil {
		return err
	}
	if err := ValidateArchiveFormat(c.Format); err != nil {
		return err
	}
	if err := ValidateName("artifact", c.Name); err != nil {
		return err
	}
	return ValidateDescription(c.Description)
}

// ValidateArchiveFormat accepts the archive formats a pack writes, and ""
// for a single file saved as it is.
func ValidateArchiveFormat(format string) error {
	switch format {
	case "", ArchiveTarGz, ArchiveZip:
		return nil
	}
	return Errorf(ReasonInvalidParameters, "format must be '%s' or '%s'", ArchiveTarGz, ArchiveZip)
}

// MaxPathBytes bounds a volume path (PATH_MAX on Linux).
const MaxPathBytes = 4096

func checkPathBytes(p string) error {
	if len(p) > MaxPathBytes {
		return Errorf(ReasonInvalidPath, "the path is %d bytes long; at most %d are allowed", len(p), MaxPathBytes)
	}
	if !utf8.ValidString(p) {
		return Errorf(ReasonInvalidPath, "the path is not valid UTF-8")
	}
	for i := 0; i < len(p); i++ {
		if b := p[i]; b < 0x20 || b == 0x7f {
			return Errorf(ReasonInvalidPath, "the path holds a control character (byte 0x%02x at offset %d)", b, i)
		}
	}
	return nil
}
