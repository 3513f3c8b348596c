package cairn

import (
	"context"
	"strconv"
)

// Bounds of the file writes.
const (
	// DefaultMaxFileWriteBytes is the default bound of one file write's
	// body (files.write.maxBytes); a larger file goes through an artifact.
	DefaultMaxFileWriteBytes = 16 << 20
	// MaxFileWriteBytes is the most files.write.maxBytes may be: the body
	// is held in memory on its way into the volume.
	MaxFileWriteBytes = 64 << 20
)

// FileWriteParams writes Data as the whole content of the file at Path.
// Mode, when set, is its permission bits in octal ("0644"); else a new
// file is 0666 and a rewritten one keeps its mode. IfMatch is the ETag the
// file must still have (file_changed otherwise); CreateOnly refuses a file
// that exists (target_exists).
type FileWriteParams struct {
	Path       string
	Data       []byte
	Mode       string
	IfMatch    string
	CreateOnly bool
}

// FileRemoveParams removes a file, symlink or empty directory; Recursive, a
// directory with everything under it.
type FileRemoveParams struct {
	Path      string
	Recursive bool
}

// MakeDirParams makes a directory; Parents makes the missing ones on the
// way and takes an existing directory for done.
type MakeDirParams struct {
	Path    string `json:"path"`
	Parents bool   `json:"parents,omitempty"`
	Mode    string `json:"mode,omitempty"`
}

// MoveParams renames From to To; Overwrite replaces what To names.
type MoveParams struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

// FileChange is what a change left: the path it acted on and the entry
// there now (none after a remove).
type FileChange struct {
	Path  string     `json:"path"`
	Entry *FileEntry `json:"entry,omitempty"`
}

// FileWriter changes a workspace volume's files, each change through a
// writer sidecar that mounts the volume read-write. Reasons of every
// method: invalid_path, invalid_parameters, path_outside_mount,
// workspace_not_found, volume_not_ready, path_not_found (a missing parent
// included), path_is_symlink (a path through a symlink: never followed),
// write_failed, volume_full, docker_unavailable, sidecar_busy,
// sidecar_timeout.
type FileWriter interface {
	// WriteFile replaces the file's whole content atomically. Reasons:
	// body_too_large, path_is_directory, path_not_regular, file_changed,
	// target_exists.
	WriteFile(ctx context.Context, workspaceID string, p FileWriteParams) (*FileChange, error)
	// RemovePath removes a path. Reasons: path_is_mount_root,
	// directory_not_empty.
	RemovePath(ctx context.Context, workspaceID string, p FileRemoveParams) (*FileChange, error)
	// MakeDir makes a directory. Reasons: target_exists.
	MakeDir(ctx context.Context, workspaceID string, p MakeDirParams) (*FileChange, error)
	// MovePath renames a path. Reasons: path_is_mount_root,
	// target_exists, directory_not_empty, target_is_directory.
	MovePath(ctx context.Context, workspaceID string, p MoveParams) (*FileChange, error)
}

// ValidateFileMode checks a mode a write may give: permission bits in
// octal, at most four digits; set-user-ID and the like are refused.
func ValidateFileMode(mode string) error {
	if mode == "" {
		return nil
	}
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || len(mode) > 4 || m > 0o777 {
		return Errorf(ReasonInvalidParameters, "mode must be permission bits in octal, 0000 to 0777")
	}
	return nil
}

// Bounds of search and tree, as the browse sidecar holds them.
const (
	DefaultSearchLimit = 100
	MaxSearchLimit     = 1000
	MaxPatternBytes    = 1024
	DefaultTreeDepth   = 3
	MaxTreeDepth       = 32
	DefaultTreeLimit   = 1000
	MaxTreeLimit       = 10_000
)

// FileSearchParams searches under Path: names matching Glob (path.Match
// syntax, on the base name) and, with Content, lines matching that RE2
// expression in the regular text files among them. Limit 0 is the default.
type FileSearchParams struct {
	Path    string
	Glob    string
	Content string
	Limit   int
}

// FileMatch is a file whose name matched (Line 0), or one line of a file
// that matched the content expression.
type FileMatch struct {
	Path string `json:"path"`
	Line int    `json:"line,omitempty"`
	Text string `json:"text,omitempty"`
}

// FileSearch is a search's answer. Stopped names the bound that ended it
// before it saw everything — "results", "entries", "bytes" or "time" —
// and is empty when it saw all; Scanned counts the entries looked at.
type FileSearch struct {
	Path    string      `json:"path"`
	Matches []FileMatch `json:"matches"`
	Stopped string      `json:"stopped,omitempty"`
	Scanned int64       `json:"scanned"`
}

// FileTreeParams lists Path recursively, Depth levels down (1: its own
// entries), at most Limit entries. Zero fields take the defaults.
type FileTreeParams struct {
	Path  string
	Depth int
	Limit int
}

// FileTreeEntry is one entry of a tree, with its whole path.
type FileTreeEntry struct {
	Path string `json:"path"`
	FileEntry
}

// FileTree is a tree's answer, depth first in byte order of names;
// Stopped and Scanned as for a search.
type FileTree struct {
	Path    string          `json:"path"`
	Entries []FileTreeEntry `json:"entries"`
	Stopped string          `json:"stopped,omitempty"`
	Scanned int64           `json:"scanned"`
}

// FileFinder searches and walks a workspace volume's files in its browse
// container; symlinks are reported, never followed. Reasons: as
// FileService.ListFiles.
type FileFinder interface {
	SearchFiles(ctx context.Context, workspaceID string, p FileSearchParams) (*FileSearch, error)
	FileTree(ctx context.Context, workspaceID string, p FileTreeParams) (*FileTree, error)
	// StatFile describes the path itself, whatever it is (a directory's
	// own entry, not its children; a symlink, not its target).
	StatFile(ctx context.Context, workspaceID, path string) (*FileTreeEntry, error)
}
