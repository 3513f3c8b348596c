package dialog

import (
	"context"
	"path"
	"strings"
	"time"

	"github.com/cairn-dev/cairn"
)

// Lister is what a volume path completion reads: one page of a directory
// of the workspace volume.
type Lister interface {
	ListFiles(ctx context.Context, workspaceID string, p cairn.FileListParams) (*cairn.FileListing, error)
}

// completeTimeout bounds one completion's listing: a slow volume leaves the
// field as it was, not a completion arriving a minute later.
const completeTimeout = 10 * time.Second

// VolumeDir returns a reader of workspace wsID's directories for a path
// field's completion (CompleteWith): at most maxDirEntries names of dir,
// nothing for a path outside the mount or a directory that cannot be
// listed. A directory entry leads on; a symlink does not, since cairn
// never follows one. Names the API cannot address (a control character)
// are not offered.
func VolumeDir(ctx context.Context, l Lister, wsID string) func(dir string) []DirEntry {
	return func(dir string) []DirEntry {
		dir = path.Clean(dir)
		if cairn.ValidateListPath(dir) != nil {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, completeTimeout)
		defer cancel()
		var out []DirEntry
		after := ""
		for len(out) < maxDirEntries {
			page, err := l.ListFiles(ctx, wsID, cairn.FileListParams{Path: dir, Limit: cairn.MaxFileListLimit, After: after})
			if err != nil {
				return out // what could be read is what is offered
			}
			for _, e := range page.Entries {
				if Addressable(e.Name) {
					out = append(out, DirEntry{Name: e.Name, Dir: e.Type == cairn.FileTypeDir})
				}
			}
			if page.NextAfter == "" {
				break
			}
			after = page.NextAfter
		}
		return out
	}
}

// Addressable reports a name the API can address in a path: no control
// character, valid UTF-8 (cairn.ValidateVolumePath refuses any other).
func Addressable(name string) bool {
	return name != "" && !strings.Contains(name, "/") && cairn.ValidateVolumePath(cairn.MountPath+"/"+name) == nil
}
