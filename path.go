package cairn

import (
	"path"
	"strings"
)

// ValidateVolumePath checks a source or target path against the mount,
// lexically: absolute, not the mount point itself, and under it component
// by component (MountPath+"X" is outside). The sidecar re-checks against
// the real filesystem, symlinks included; its check is the authoritative
// one.
func ValidateVolumePath(p string) error {
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
